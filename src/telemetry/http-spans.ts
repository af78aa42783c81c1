import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { NextFunction, Request, Response } from 'express';

const tracer = trace.getTracer('workflow-engine-api');

/**
 * One SERVER span per API request, continuing a caller's W3C trace context; everything the
 * request does (the Temporal client's StartWorkflow, database calls) runs inside it. Named
 * by route once routing has matched it, so ids in paths do not make every name unique.
 * The query string is left out: it is caller input.
 */
export function httpSpans(req: Request, res: Response, next: NextFunction): void {
  const parent = propagation.extract(context.active(), req.headers);
  const span = tracer.startSpan(
    `${req.method} ${req.path}`,
    { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method, 'url.path': req.path } },
    parent,
  );
  res.once('finish', () => {
    const route = (req.route as { path?: string } | undefined)?.path;
    if (route) {
      span.updateName(`${req.method} ${req.baseUrl}${route}`);
      span.setAttribute('http.route', `${req.baseUrl}${route}`);
    }
    span.setAttribute('http.response.status_code', res.statusCode);
    if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  });
  context.with(trace.setSpan(parent, span), next);
}
