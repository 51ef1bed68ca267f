import http from 'node:http';
import type { AddressInfo } from 'node:net';

// BENCH_OTEL=1: tracing on against a local OTLP/HTTP sink that reads each export and answers 200
// (what a collector costs the platform is the export's serialisation and POST, not the
// collector's work). Without it tracing is off, as by default. Run a benchmark both ways in one
// sitting to compare: `npm run bench -- http` then `BENCH_OTEL=1 npm run bench -- http`.
// TRACE_READS_RATIO (the platform's setting, 0.1 by default) is passed on when it is set.

export async function tracingEnv(): Promise<{ env: Record<string, string>; spans: () => number; close: () => Promise<void> }> {
  if (!process.env.BENCH_OTEL) return { env: {}, spans: () => 0, close: async () => {} };
  const sink = await startOtlpSink();
  console.log(`tracing on: OTLP/HTTP sink at ${sink.url}`);
  return {
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
      OTEL_BSP_SCHEDULE_DELAY: '1000',
      ...(process.env.TRACE_READS_RATIO ? { TRACE_READS_RATIO: process.env.TRACE_READS_RATIO } : {}),
    },
    spans: sink.bytes,
    close: sink.close,
  };
}

/** The sink alone: its base URL, the bytes of OTLP it received (a sign that spans flowed). */
export async function startOtlpSink(): Promise<{ url: string; bytes: () => number; close: () => Promise<void> }> {
  let bytes = 0;
  const server = http.createServer((req, res) => {
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    // An empty ExportTraceServiceResponse in the request's encoding (protobuf: no bytes at all).
    req.on('end', () => {
      if (String(req.headers['content-type']).startsWith('application/json')) res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      else res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    bytes: () => bytes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The results file's suffix: `-tracing-on` (and `-reads-<ratio>` when TRACE_READS_RATIO is set) with BENCH_OTEL. */
export function tracingSuffix(): string {
  if (!process.env.BENCH_OTEL) return '';
  return `-tracing-on${process.env.TRACE_READS_RATIO ? `-reads-${process.env.TRACE_READS_RATIO}` : ''}`;
}
