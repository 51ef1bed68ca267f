import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import { AppError } from './errors.ts';
import { createHttpMetrics } from './http-metrics.ts';
import { safeEqual } from './secrets.ts';

// Prometheus metrics at /metrics: one registry per app (tests build many apps in one process).

export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // The per-request series, counted without prom-client's per-call label hashing (http-metrics.ts).
  const http = createHttpMetrics({ registry, buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5] });
  return { registry, http, voice: createVoiceMetrics(registry) };
}

/** Seconds buckets for what a caller waits on: a turn's latency and its stages. */
const TURN_BUCKETS = [0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10];
const STAGE_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 2, 5];

/**
 * The live-call instruments (DESIGN part 9, Observability). The calls module binds their label
 * children once per call (a turn is a few a minute: prom-client's per-call label hashing does not
 * matter here), and registers the gauges that read its state at scrape time (modules/calls/gauges.ts).
 */
function createVoiceMetrics(registry: Registry) {
  return {
    /** End of the caller's turn → the agent's first frame written, by the call's providers. */
    turnLatency: new Histogram({
      name: 'vap_turn_latency_seconds',
      help: "Turn latency: end of the caller's turn to the agent's first audio frame written, by the call's STT, LLM and TTS providers",
      labelNames: ['stt', 'llm', 'tts'] as const,
      buckets: TURN_BUCKETS,
      registers: [registry],
    }),
    /** A turn's stages: stt (what the turn waited for its words), llm_first_token, tts_first_audio. */
    turnStage: new Histogram({
      name: 'vap_turn_stage_seconds',
      help: "A turn's stages: stt (the wait for the caller's words after the turn ended), llm_first_token, tts_first_audio; by the stage's provider",
      labelNames: ['stage', 'provider'] as const,
      buckets: STAGE_BUCKETS,
      registers: [registry],
    }),
    providerErrors: new Counter({
      name: 'vap_provider_errors_total',
      help: 'Errors of a live call by kind (stt_failed, llm_failed, tts_failed, transfer_failed, media_error)',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
    postCallFailures: new Counter({
      name: 'vap_post_call_failures_total',
      help: 'Post-call steps (recording, analysis) that failed after their last attempt',
      labelNames: ['step'] as const,
      registers: [registry],
    }),
  };
}

export type VoiceMetrics = ReturnType<typeof createVoiceMetrics>;

export type Metrics = ReturnType<typeof createMetrics>;

export function registerMetrics(app: FastifyInstance, metrics: Metrics, token: string | undefined) {
  app.addHook('onResponse', (request, reply, done) => {
    metrics.http.record(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    done();
  });

  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (token) {
      const header = request.headers.authorization ?? '';
      if (!safeEqual(header, `Bearer ${token}`)) {
        throw new AppError('unauthorized', '/metrics needs the METRICS_TOKEN bearer token', { headers: { 'WWW-Authenticate': 'Bearer' } });
      }
    }
    reply.type(metrics.registry.contentType);
    return metrics.registry.metrics();
  });
}
