import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, NoopSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

export interface TracingSettings {
  /** OTEL_EXPORTER_OTLP_ENDPOINT: traces are off unless it is set. */
  endpoint: string;
  serviceName: string;
}

/** What the worker hands Temporal's workflow span sink; the API and activities use the global tracer. */
export interface Tracing {
  processor: SpanProcessor;
  resource: Resource;
  shutdown(): Promise<void>;
}

export function parseTracing(env: NodeJS.ProcessEnv): TracingSettings | undefined {
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint) return undefined;
  if (!URL.canParse(endpoint) || !/^https?:$/.test(new URL(endpoint).protocol)) {
    throw new Error(`OTEL_EXPORTER_OTLP_ENDPOINT must be an absolute http(s) URL, got "${endpoint}"`);
  }
  return { endpoint, serviceName: env.OTEL_SERVICE_NAME || 'workflow-engine' };
}

/**
 * Registers the global tracer provider (AsyncLocalStorage context, W3C trace-context
 * propagation) exporting over OTLP/HTTP. The exporter reads the OTEL_EXPORTER_OTLP_*
 * variables itself (endpoint, headers), so credentials for the collector never pass
 * through this service's configuration or logs.
 */
export function startTracing(settings: TracingSettings, role: string): Tracing {
  const resource = new Resource({ 'service.name': settings.serviceName, 'workflow_engine.role': role });
  const processor = new BatchSpanProcessor(new OTLPTraceExporter());
  const provider = new NodeTracerProvider({ resource, spanProcessors: [processor] });
  provider.register();
  return { processor, resource, shutdown: () => provider.shutdown() };
}

/** Workflow spans still go through the sink when traces are off, so the bundle is the same either way. */
export const tracingOff = (): Pick<Tracing, 'processor' | 'resource'> => ({ processor: new NoopSpanProcessor(), resource: Resource.empty() });
