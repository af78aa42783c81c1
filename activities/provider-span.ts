import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';

const tracer = trace.getTracer('workflow-engine-provider-http');

/**
 * A CLIENT span around one provider HTTP call, its trace context sent along (traceparent).
 * Only the method, host, path and status are recorded: never headers, bodies or error
 * messages, which may quote the call's credentials.
 */
export async function providerSpan<R extends { status: number }>(
  provider: string,
  method: string,
  url: string,
  headers: Record<string, string>,
  call: () => Promise<R>,
): Promise<R> {
  const target = new URL(url);
  const span = tracer.startSpan(`${provider} ${method}`, {
    kind: SpanKind.CLIENT,
    attributes: { 'http.request.method': method, 'server.address': target.hostname, 'url.path': target.pathname, provider },
  });
  const active = trace.setSpan(context.active(), span);
  propagation.inject(active, headers);
  try {
    const res = await context.with(active, call);
    span.setAttribute('http.response.status_code', res.status);
    if (res.status >= 400) span.setStatus({ code: SpanStatusCode.ERROR });
    return res;
  } catch (err) {
    span.setStatus({ code: SpanStatusCode.ERROR });
    span.setAttribute('error.type', String((err as { name?: unknown })?.name ?? 'Error'));
    throw err;
  } finally {
    span.end();
  }
}
