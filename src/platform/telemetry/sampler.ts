// Which requests start a trace when tracing is on (docs/decisions.md, "Reads are sampled"). Every
// call, job, webhook delivery and state-changing request is traced; a read (a GET, HEAD or OPTIONS
// request that arrives without a trace of its own) starts one with probability `readRatio`. The
// draw comes before any span exists, so a read left out costs a random number and nothing else
// (bench/README.md, Tracing cost). A request with a `traceparent` follows its caller's decision:
// the tracer provider's sampler is parent-based (telemetry.ts).

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Whether a request of `method` that carries no trace starts one. */
export function createRequestSampler(readRatio: number, random: () => number = Math.random): (method: string) => boolean {
  return (method) => !READ_METHODS.has(method) || random() < readRatio;
}
