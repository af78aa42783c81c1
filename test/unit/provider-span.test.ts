import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { providerSpan } from '../../activities/provider-span';
import { parseTracing } from '../../src/telemetry/tracing';

describe('providerSpan', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

  beforeAll(() => provider.register());
  afterAll(async () => {
    await provider.shutdown();
    trace.disable();
  });
  beforeEach(() => exporter.reset());

  it('wraps the call in a CLIENT span and sends its trace context along', async () => {
    const headers: Record<string, string> = { authorization: 'Bearer s3cret' };
    const res = await providerSpan('e-signature API', 'GET', 'https://esign.example/api/v2.1?x=1', headers, async () => ({ status: 200 }));
    expect(res.status).toBe(200);
    const [span] = exporter.getFinishedSpans();
    expect(span.name).toBe('e-signature API GET');
    expect(span.kind).toBe(SpanKind.CLIENT);
    expect(span.attributes).toEqual({
      'http.request.method': 'GET',
      'server.address': 'esign.example',
      'url.path': '/api/v2.1',
      provider: 'e-signature API',
      'http.response.status_code': 200,
    });
    expect(headers.traceparent).toBe(`00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`);
  });

  it('marks a failed call without recording its message, which may quote credentials', async () => {
    const failing = async () => {
      throw Object.assign(new Error('"Bearer s3cret" is an invalid header value'), { name: 'TypeError' });
    };
    await expect(providerSpan('dbhost', 'DELETE', 'https://db.example/v1/x', {}, failing)).rejects.toThrow('invalid header');
    const [span] = exporter.getFinishedSpans();
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    expect(span.attributes['error.type']).toBe('TypeError');
    expect(JSON.stringify({ attributes: span.attributes, events: span.events, status: span.status })).not.toContain('s3cret');
  });

  it('marks a 4xx/5xx answer as an error', async () => {
    await providerSpan('dbhost', 'GET', 'https://db.example/v1/x', {}, async () => ({ status: 503 }));
    expect(exporter.getFinishedSpans()[0].status.code).toBe(SpanStatusCode.ERROR);
  });
});

describe('parseTracing', () => {
  it('is off without OTEL_EXPORTER_OTLP_ENDPOINT', () => {
    expect(parseTracing({})).toBeUndefined();
  });

  it('names the service workflow-engine unless OTEL_SERVICE_NAME says otherwise', () => {
    expect(parseTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toEqual({ endpoint: 'http://collector:4318', serviceName: 'workflow-engine' });
    expect(parseTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://c', OTEL_SERVICE_NAME: 'engine-eu' })?.serviceName).toBe('engine-eu');
  });

  it('refuses an endpoint that is not an http(s) URL', () => {
    expect(() => parseTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(
      'OTEL_EXPORTER_OTLP_ENDPOINT must be an absolute http(s) URL, got "collector:4318"',
    );
  });
});
