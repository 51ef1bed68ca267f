// The HTTP load generator of bench/http.bench.ts, run in a child process (so its work shares
// neither the servers' event loop nor their process: the bench measures the servers' own CPU
// time per request): a fixed number of requests in flight through an undici Pool of that many
// connections, each loop sending its next request as soon as the previous answers — or, with
// `ratePerSecond`, paced: each loop sends at most every connections/rate seconds, so the server
// works at a fixed rate below its capacity instead of flat out.
// Messages: {url, path, method?, body?, headers, connections, warmupMs, durationMs} in, the figures out.
import { Pool } from 'undici';

export interface LoadRequest {
  url: string;
  path: string;
  /** GET by default; a body is sent as JSON. */
  method?: 'GET' | 'PATCH' | 'POST';
  body?: unknown;
  headers: Record<string, string>;
  connections: number;
  warmupMs: number;
  durationMs: number;
  /** Requests a second over all connections; unset: as fast as the server answers. */
  ratePerSecond?: number;
}

export interface LoadResult {
  /** Answered within the measured window. */
  requests: number;
  /** Answered in all, warm-up included. */
  total: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  /** Status codes other than 200 seen (a wrong setup shows here, not as speed). */
  statuses: Record<string, number>;
}

const percentile = (sorted: Float64Array, p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

async function run(load: LoadRequest): Promise<LoadResult> {
  const pool = new Pool(load.url, { connections: load.connections, pipelining: 1, keepAliveTimeout: 30_000 });
  const latencies = new Float64Array(2_000_000);
  let count = 0;
  let total = 0;
  let errors = 0;
  const statuses: Record<string, number> = {};
  const method = load.method ?? 'GET';
  const body = load.body === undefined ? undefined : JSON.stringify(load.body);
  const headers = body === undefined ? load.headers : { ...load.headers, 'content-type': 'application/json' };
  let measuring = false;
  let stopping = false;

  const intervalMs = load.ratePerSecond ? (load.connections * 1000) / load.ratePerSecond : 0;
  async function loop(_: unknown, index: number) {
    // Paced loops start spread over one interval, each then keeps its own schedule.
    let due = performance.now() + (intervalMs * index) / load.connections;
    while (!stopping) {
      if (intervalMs > 0) {
        const wait = due - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        due += intervalMs;
        if (stopping) break;
      }
      const started = performance.now();
      try {
        const res = await pool.request({ method, path: load.path, headers, body });
        await res.body.dump();
        total++;
        if (res.statusCode !== 200) statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
      } catch {
        errors++;
      }
      if (measuring && !stopping && count < latencies.length) latencies[count++] = performance.now() - started;
    }
  }

  const loops = Array.from({ length: load.connections }, loop);
  await new Promise((resolve) => setTimeout(resolve, load.warmupMs));
  measuring = true;
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, load.durationMs));
  const seconds = (performance.now() - started) / 1000;
  measuring = false;
  stopping = true;
  await Promise.all(loops);
  await pool.close();
  const sorted = latencies.subarray(0, count).sort();
  return { requests: count, total, rps: count / seconds, p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99), errors, statuses };
}

process.on('message', (load: LoadRequest) => {
  run(load).then(
    (result) => process.send?.({ result }),
    (error: Error) => process.send?.({ error: error.message }),
  );
});
