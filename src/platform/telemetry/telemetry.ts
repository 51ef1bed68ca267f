import type { Tracer } from '@opentelemetry/api';
import { API_VERSION } from '../http/openapi.ts';

// OpenTelemetry tracing, on only when OTEL_EXPORTER_OTLP_ENDPOINT is set. Off, nothing of the SDK
// is loaded: `tracer` is undefined and every instrumented place skips its span entirely (not even
// the API's no-op tracer is called on the hot path). On, the SDK is imported here and nowhere
// else, one tracer provider per app (tests build many apps in one process: none is registered
// globally), spans batched to the collector over OTLP/HTTP (JSON). No context manager is
// registered either: an AsyncLocalStorage once entered keeps V8's promise hooks on for the whole
// process, a cost every await of every request pays, sampled or not (issue 32). The trace context
// is passed explicitly instead (context.ts).

export interface TelemetryConfig {
  /** OTEL_EXPORTER_OTLP_ENDPOINT: the collector's base URL (traces go to `<endpoint>/v1/traces`). */
  endpoint: string | undefined;
  /** OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: the full traces URL, when it is not `<endpoint>/v1/traces`. */
  tracesEndpoint: string | undefined;
  /** OTEL_EXPORTER_OTLP_HEADERS: sent with every export (a vendor's API key). */
  headers: Record<string, string>;
  /** OTEL_SERVICE_NAME. */
  serviceName: string;
  /** Milliseconds between two exports of the batch. */
  exportDelayMs: number;
  /** OTEL_EXPORTER_OTLP_TIMEOUT: how long one export may take, its retries included. */
  exportTimeoutMs: number;
  /** OTEL_EXPORTER_OTLP_PROTOCOL: the export's encoding, protobuf (the default: a third cheaper to serialise) or JSON. */
  protocol: 'http/protobuf' | 'http/json';
  /** TRACE_READS_RATIO: the share of reads (GET, HEAD, OPTIONS requests without a trace) that start one; all else is traced (sampler.ts). */
  readsRatio: number;
}

export interface Telemetry {
  /** The app's tracer; undefined when tracing is off. */
  readonly tracer: Tracer | undefined;
  /** Exports every ended span now (tests, shutdown). */
  flush(): Promise<void>;
  /** Exports what is left and stops the exporter. */
  shutdown(): Promise<void>;
}

export const TRACING_OFF: Telemetry = { tracer: undefined, flush: async () => {}, shutdown: async () => {} };

/** The traces URL of the configuration: the explicit one, else the endpoint's `/v1/traces`. */
export function tracesUrl(config: TelemetryConfig): string | undefined {
  if (config.tracesEndpoint) return config.tracesEndpoint;
  return config.endpoint ? `${config.endpoint.replace(/\/$/, '')}/v1/traces` : undefined;
}

/**
 * `onError`: an export that failed at a flush or at shutdown (the collector unreachable). A
 * missing collector never fails a shutdown; spans it did not take are lost, as OTLP intends.
 */
export async function createTelemetry(config: TelemetryConfig, options: { onError?: (error: unknown) => void } = {}): Promise<Telemetry> {
  const url = tracesUrl(config);
  if (!url) return TRACING_OFF;
  const [sdk, exporter, resources] = await Promise.all([
    import('@opentelemetry/sdk-trace-base'),
    config.protocol === 'http/json' ? import('@opentelemetry/exporter-trace-otlp-http') : import('@opentelemetry/exporter-trace-otlp-proto'),
    import('@opentelemetry/resources'),
  ]);
  const provider = new sdk.BasicTracerProvider({
    resource: resources.resourceFromAttributes({ 'service.name': config.serviceName, 'service.version': API_VERSION }),
    // A span with a parent follows it; a trace starts only where the platform starts one (sampler.ts).
    sampler: new sdk.ParentBasedSampler({ root: new sdk.AlwaysOnSampler() }),
    spanProcessors: [
      new sdk.BatchSpanProcessor(new exporter.OTLPTraceExporter({ url, headers: config.headers, timeoutMillis: config.exportTimeoutMs }), { scheduledDelayMillis: config.exportDelayMs }),
    ],
  });
  return {
    tracer: provider.getTracer('voice-agent-platform', API_VERSION),
    flush: () => provider.forceFlush().catch((error) => options.onError?.(error)),
    shutdown: () => provider.shutdown().catch((error) => options.onError?.(error)),
  };
}
