import { type Span, SpanKind, SpanStatusCode, type Tracer } from '@opentelemetry/api';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../platform/clock.ts';
import type { DatabaseHandle } from '../../platform/db/database.ts';
import { API_VERSION } from '../../platform/http/openapi.ts';
import { leaseHolderName } from '../../platform/jobs/lease.ts';
import { createJobRunner, type JobDefinition } from '../../platform/jobs/runner.ts';
import { type OutboundClient, UrlRefusedError } from '../../platform/outbound/ssrf-guard.ts';
import { DELIVERY_CHANNEL, type WakeSignal } from '../../platform/outbox/emitter.ts';
import { attemptOffsets, judgeStatus, type Outcome, planNextAttempt } from '../../platform/outbox/retry-policy.ts';
import { signedHeaders } from '../../platform/outbox/signing.ts';
import { contextUnder, traceparentOf } from '../../platform/telemetry/context.ts';
import { buryLostLastAttempts, type ClaimedDelivery, claimDeliveries, createAttemptRecorder } from './delivery-sql.ts';
import { PREVIOUS_SECRET_TTL_MS } from './service.ts';

// The delivery worker: webhook deliveries as a job on the runner (src/platform/jobs/runner.ts).
// Deliveries are the queue (DESIGN part 2, "background work"):
//  1. claim: ONE statement (./delivery-sql.ts) picks due rows with FOR UPDATE SKIP LOCKED,
//     counts the attempt and sets a lease (holder + expiry = timeout + 5 s), then commits;
//  2. send: the HTTP POST happens outside any transaction (PGlite is one connection: a
//     transaction held across HTTP would stall the whole process);
//  3. record: a new short statement applies the result only while this holder still owns the
//     lease for this attempt, and writes the attempt row (results that arrive while one batch is
//     being written share the next statement).
// The sweep buries rows whose worker died in their last attempt. Woken by the in-process nudge
// after an emit, by NOTIFY on PostgreSQL (DELIVERY_CHANNEL), and by polling.

const EXCERPT_BYTES = 2048;
const LEASE_MARGIN_MS = 5000;
const USER_AGENT = `VoiceAgentPlatform-Webhooks/${API_VERSION}`;

export interface WorkerDeps {
  database: DatabaseHandle;
  clock: Clock;
  webhooks: { timeoutMs: number; agentSchedule: number[]; tenantSchedule: number[]; concurrency: number };
  outbound: OutboundClient;
  logger: FastifyBaseLogger;
  /** In-process wake-ups (platform.events.wake). */
  wake?: WakeSignal;
  /** Lease holder name; default host:pid:random. */
  holder?: string;
  /** Safety-net polling interval. */
  pollIntervalMs?: number;
  random?: () => number;
  /** Tracing on (platform.telemetry.tracer): a span per delivery, its POST carrying `traceparent`. */
  tracer?: Tracer;
}

interface AttemptResult {
  outcome: Outcome;
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  excerpt: string | null;
  error: string | null;
}

/**
 * The stored excerpt of a response body: at most EXCERPT_BYTES of UTF-8, never a character cut
 * in two, and no NUL (PostgreSQL text cannot hold one: the attempt could not be recorded, and a
 * delivered event would be sent again and again until dead).
 */
export function responseExcerpt(body: Buffer): string | null {
  let text = '';
  let bytes = 0;
  // By code points, so no character is cut in two (one cut by the response cap decodes to U+FFFD).
  for (const char of body.subarray(0, EXCERPT_BYTES).toString('utf8')) {
    if (char === '\u0000') continue;
    const size = Buffer.byteLength(char);
    if (bytes + size > EXCERPT_BYTES) break;
    text += char;
    bytes += size;
  }
  return text.length > 0 ? text : null;
}

/** The SSRF guard refused the URL: before the request, or at connect time (undici wraps it as the cause). */
function isRefusal(error: unknown): error is Error {
  return error instanceof UrlRefusedError || (error as { cause?: unknown } | null)?.cause instanceof UrlRefusedError;
}

function describeError(error: unknown): string {
  const err = error as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (err?.name === 'TimeoutError' || err?.name === 'AbortError') return 'timeout: no response within the webhook timeout';
  const cause = err?.cause?.code ?? err?.cause?.message;
  return `${err?.message ?? String(error)}${cause ? ` (${cause})` : ''}`.slice(0, 500);
}

export function createWebhookWorker(deps: WorkerDeps) {
  const { database, clock, webhooks, outbound, logger } = deps;
  const holder = deps.holder ?? leaseHolderName();
  const leaseMs = webhooks.timeoutMs + LEASE_MARGIN_MS;
  const agentOffsets = attemptOffsets(webhooks.agentSchedule);
  const tenantOffsets = attemptOffsets(webhooks.tenantSchedule);
  const recorder = createAttemptRecorder(database, { holder, now: () => clock.now() });

  /** `job`: the run's span (tracing on), the parent of the POST's. */
  async function send(row: ClaimedDelivery, job: Span | undefined): Promise<AttemptResult> {
    const startedAt = clock.now();
    // Each destination's current secrets sign (DESIGN: after a rotation X-Service-Signature uses
    // the new secret and webhook-signature carries both for 24 h), retries and replays of older
    // events included. An agent delivery falls back to the snapshot taken at emit when its
    // agent row is unknown.
    const tenant = row.destination === 'tenant';
    const agentNow = !tenant && row.agent_secret !== null;
    const secret = tenant ? row.endpoint_secret : agentNow ? row.agent_secret : row.secret;
    const previousSecret = tenant ? row.endpoint_previous_secret : agentNow ? row.agent_previous_secret : row.previous_secret;
    const previousUntil = tenant
      ? row.endpoint_previous_expires_at
      : agentNow
        ? row.agent_rotated_at && new Date(row.agent_rotated_at.getTime() + PREVIOUS_SECRET_TTL_MS)
        : row.previous_secret_expires_at;
    const previous = previousSecret && previousUntil && previousUntil > startedAt ? [previousSecret] : [];
    if (!secret) {
      return { outcome: { kind: 'failed' }, startedAt, durationMs: 0, statusCode: null, excerpt: null, error: 'the tenant webhook was deleted' };
    }
    const headers: Record<string, string> = signedHeaders({ id: row.event_id, body: row.payload, at: startedAt, secret, previousSecrets: previous, userAgent: USER_AGENT });
    // The receiver continues the trace of the work that emitted the event (W3C Trace Context).
    const attributes = { 'http.request.method': 'POST', 'vap.delivery_id': row.id, 'vap.destination': row.destination };
    const span = deps.tracer?.startSpan('POST webhook', { kind: SpanKind.CLIENT, attributes }, contextUnder(job));
    const traceparent = traceparentOf(span);
    if (traceparent) headers.traceparent = traceparent;
    const started = performance.now();
    try {
      const result = await post(row, headers, startedAt, started);
      if (result.statusCode !== null) span?.setAttribute('http.response.status_code', result.statusCode);
      if (result.outcome.kind !== 'succeeded') span?.setStatus({ code: SpanStatusCode.ERROR });
      return result;
    } finally {
      span?.end();
    }
  }

  async function post(row: ClaimedDelivery, headers: Record<string, string>, startedAt: Date, started: number): Promise<AttemptResult> {
    try {
      const response = await outbound.request(row.url, {
        method: 'POST',
        headers,
        body: row.payload,
        timeoutMs: webhooks.timeoutMs,
        maxBytes: EXCERPT_BYTES,
        // A redirected POST would be resent as GET by most rules; receivers must answer at their URL.
        maxRedirects: 0,
      });
      return {
        outcome: judgeStatus(response.status),
        startedAt,
        durationMs: response.durationMs,
        statusCode: response.status,
        excerpt: responseExcerpt(response.body),
        error: null,
      };
    } catch (error) {
      const durationMs = Math.round(performance.now() - started);
      if (isRefusal(error)) {
        const reason = error instanceof UrlRefusedError ? error.message : (error.cause as Error).message;
        return { outcome: { kind: 'failed' }, startedAt, durationMs, statusCode: null, excerpt: null, error: `URL refused: ${reason}` };
      }
      return { outcome: { kind: 'retry' }, startedAt, durationMs, statusCode: null, excerpt: null, error: describeError(error) };
    }
  }

  /** Sends one claimed delivery and records its result, fenced by this attempt's lease. */
  async function deliver(row: ClaimedDelivery, _signal?: AbortSignal, span?: Span): Promise<void> {
    const result = await send(row, span);
    const plan = planNextAttempt({
      outcome: result.outcome,
      attemptCount: row.attempt_count,
      maxAttempts: row.max_attempts,
      firstAttemptAt: row.first_attempt_at,
      schedule: row.destination === 'agent' ? agentOffsets : tenantOffsets,
      jitter: row.destination === 'agent' ? 0.1 : 0,
      random: deps.random,
    });
    const applied = await recorder.record({
      row,
      plan,
      lastError: result.error ?? (result.outcome.kind === 'succeeded' ? null : `HTTP ${result.statusCode}`),
      startedAt: result.startedAt,
      durationMs: result.durationMs,
      statusCode: result.statusCode,
      excerpt: result.excerpt,
      error: result.error,
    });
    if (!applied) logger.warn({ deliveryId: row.id, attempt: row.attempt_count }, 'webhook attempt result dropped: the lease was lost');
  }

  const job: JobDefinition<ClaimedDelivery> = {
    name: 'webhook-deliveries',
    claim: (limit) => claimDeliveries(database, { holder, now: clock.now(), leaseMs, limit }),
    run: deliver,
    sweep: (now) => buryLostLastAttempts(database, now),
    concurrency: webhooks.concurrency,
    claimBatch: Math.ceil(webhooks.concurrency / 4),
    pollIntervalMs: deps.pollIntervalMs ?? 1000,
    channel: DELIVERY_CHANNEL,
    wake: deps.wake,
    // A delivery in flight ends within its timeout; past the lease another worker may take it anyway.
    stopTimeoutMs: leaseMs,
    describe: (row) => ({ deliveryId: row.id, attempt: row.attempt_count }),
    traceParent: (row) => row.trace_parent,
    spanAttributes: (row) => ({ 'vap.delivery_id': row.id, 'vap.workspace_id': row.workspace_id, 'vap.attempt': row.attempt_count }),
  };
  const runner = createJobRunner({ database, clock, logger, job, tracer: deps.tracer });

  return {
    holder,
    /** Claims what is due now (up to the concurrency setting), delivers it, returns how many were attempted. */
    runDueOnce: runner.runDueOnce,
    /** Starts the loop (idempotent). */
    start: runner.start,
    /** Stops claiming and waits for the deliveries in flight to be recorded. */
    stop: runner.stop,
  };
}

export type WebhookWorker = ReturnType<typeof createWebhookWorker>;
