import type { Metric, MetricObjectWithValues, MetricType, MetricValue, Registry } from 'prom-client';

// The two per-request series of /metrics, http_requests_total{method,route,status} and
// http_request_duration_seconds{method,route}, counted in plain numbers and handed to prom-client's
// registry as metrics it reads at scrape time. prom-client's own Counter and Histogram hash their
// label object on every call, bound children (`labels(...)`) included (prom-client 15 re-hashes the
// bound labels per `inc`/`observe`): about 0.65 µs a request for the pair. Here a request costs one
// map lookup by method and route and a bucket search, once per route bound to its counts (issue 33).
// The exposition is prom-client's, the same text its Counter and Histogram write
// (http-metrics.test.ts compares them).

/** One route's figures: a count per status, and the duration histogram's buckets, sum and count. */
interface RouteFigures {
  method: string;
  route: string;
  byStatus: Map<number, number>;
  /** Observations at or below each bound (not cumulative: summed when read). */
  buckets: Float64Array;
  sum: number;
  count: number;
}

export interface HttpMetrics {
  /** One answered request: its method, its route's pattern, its status and its duration in seconds. */
  record(method: string, route: string, status: number, seconds: number): void;
}

export interface HttpMetricsOptions {
  registry: Registry;
  /** The duration histogram's upper bounds in seconds, ascending (+Inf is added). */
  buckets: readonly number[];
}

const REQUESTS = { name: 'http_requests_total', help: 'HTTP requests by method, route and status' };
const DURATION = { name: 'http_request_duration_seconds', help: 'HTTP request duration by method and route' };

export function createHttpMetrics({ registry, buckets }: HttpMetricsOptions): HttpMetrics {
  const routes = new Map<string, RouteFigures>();

  function figuresOf(method: string, route: string): RouteFigures {
    const key = `${method} ${route}`;
    let figures = routes.get(key);
    if (!figures) {
      figures = { method, route, byStatus: new Map(), buckets: new Float64Array(buckets.length + 1), sum: 0, count: 0 };
      routes.set(key, figures);
    }
    return figures;
  }

  function requestValues(): MetricValue<string>[] {
    const values: MetricValue<string>[] = [];
    for (const { method, route, byStatus } of routes.values()) {
      for (const [status, value] of byStatus) values.push({ labels: { method, route, status: String(status) }, value });
    }
    return values;
  }

  function durationValues(): MetricValue<string>[] {
    const values: MetricValue<string>[] = [];
    for (const figures of routes.values()) {
      // Not observed since the last reset: no series, as prom-client's Histogram after `reset()`.
      if (figures.count === 0) continue;
      const labels = { method: figures.method, route: figures.route };
      let cumulative = 0;
      for (let i = 0; i <= buckets.length; i++) {
        cumulative += figures.buckets[i];
        const le = i < buckets.length ? buckets[i] : '+Inf';
        values.push({ labels: { le, ...labels }, value: cumulative, metricName: `${DURATION.name}_bucket` } as MetricValue<string>);
      }
      values.push({ labels, value: figures.sum, metricName: `${DURATION.name}_sum` } as MetricValue<string>);
      values.push({ labels, value: figures.count, metricName: `${DURATION.name}_count` } as MetricValue<string>);
    }
    return values;
  }

  function resetCounts() {
    for (const figures of routes.values()) figures.byStatus.clear();
  }

  function resetDurations() {
    for (const figures of routes.values()) {
      figures.buckets.fill(0);
      figures.sum = 0;
      figures.count = 0;
    }
  }

  registry.registerMetric(scrapedMetric(REQUESTS, 'counter', requestValues, resetCounts));
  registry.registerMetric(scrapedMetric(DURATION, 'histogram', durationValues, resetDurations));

  return {
    record(method, route, status, seconds) {
      const figures = figuresOf(method, route);
      figures.byStatus.set(status, (figures.byStatus.get(status) ?? 0) + 1);
      let bucket = 0;
      while (bucket < buckets.length && seconds > buckets[bucket]) bucket++;
      figures.buckets[bucket]++;
      figures.sum += seconds;
      figures.count++;
    },
  };
}

/** A metric the registry reads with `get()` at scrape time (what prom-client's own metrics offer it). */
function scrapedMetric(about: { name: string; help: string }, type: 'counter' | 'histogram', values: () => MetricValue<string>[], reset: () => void): Metric {
  const metric = {
    ...about,
    type,
    aggregator: 'sum' as const,
    async get() {
      return { ...about, type: type as unknown as MetricType, aggregator: 'sum', values: values() } as Omit<MetricObjectWithValues<MetricValue<string>>, 'collect'>;
    },
    reset,
  };
  return metric as unknown as Metric;
}
