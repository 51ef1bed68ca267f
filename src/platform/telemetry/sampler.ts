import { type Attributes, type Context, type Link, type Sampler, type SamplingResult, SpanKind } from '@opentelemetry/api';

// Which traces are recorded when tracing is on (docs/decisions.md, "Tracing: reads sampled").
// Every call, job, webhook delivery and state-changing request is traced; a read (a GET, HEAD or
// OPTIONS request that starts a trace) is traced at `readRatio`, by its trace id, so that tracing
// costs reads almost nothing (bench/README.md, Tracing cost). A span whose parent is known follows
// its parent's decision: a caller that traces a read sends a sampled `traceparent` and gets it.

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

interface SamplerKit {
  AlwaysOnSampler: new () => Sampler;
  TraceIdRatioBasedSampler: new (ratio: number) => Sampler;
  ParentBasedSampler: new (config: { root: Sampler }) => Sampler;
}

/** The root decision: reads by ratio, everything else recorded. */
function rootSampler(kit: SamplerKit, readRatio: number): Sampler {
  const always = new kit.AlwaysOnSampler();
  const reads = new kit.TraceIdRatioBasedSampler(readRatio);
  return {
    shouldSample(context: Context, traceId: string, name: string, kind: SpanKind, attributes: Attributes, links: Link[]): SamplingResult {
      const method = attributes['http.request.method'];
      const read = kind === SpanKind.SERVER && typeof method === 'string' && READ_METHODS.has(method);
      return (read ? reads : always).shouldSample(context, traceId, name, kind, attributes, links);
    },
    toString: () => `ReadsByRatio{${readRatio}}`,
  };
}

/** `kit`: the SDK's samplers (the SDK is loaded only when tracing is on). */
export function createPlatformSampler(kit: SamplerKit, readRatio: number): Sampler {
  return new kit.ParentBasedSampler({ root: rootSampler(kit, readRatio) });
}
