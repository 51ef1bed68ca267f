import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { FastifyBaseLogger } from 'fastify';
import { sql } from 'kysely';
import type pg from 'pg';
import type { Clock } from '../../platform/clock.ts';
import type { DatabaseHandle } from '../../platform/db/database.ts';
import type { Executor } from '../../platform/db/schema.ts';
import { API_VERSION } from '../../platform/http/openapi.ts';
import { newId } from '../../platform/ids.ts';
import { type OutboundClient, UrlRefusedError } from '../../platform/outbound/ssrf-guard.ts';
import { DELIVERY_CHANNEL, type WakeSignal } from '../../platform/outbox/emitter.ts';
import { attemptOffsets, judgeStatus, type Outcome, planNextAttempt } from '../../platform/outbox/retry-policy.ts';
import { signedHeaders } from '../../platform/outbox/signing.ts';
import { PREVIOUS_SECRET_TTL_MS } from './service.ts';
import type { Destination } from './tables.ts';

// The delivery worker. Deliveries are the queue (DESIGN part 2, "background work"):
//  1. claim: ONE statement picks due rows with FOR UPDATE SKIP LOCKED, counts the attempt and
//     sets a lease (holder + expiry = timeout + 5 s; next_attempt_at moves to the expiry, so a
//     row whose worker died is simply due again when the lease runs out), then commits;
//  2. send: the HTTP POST happens outside any transaction (PGlite is one connection: a
//     transaction held across HTTP would stall the whole process);
//  3. record: a new short transaction applies the result only while this holder still owns the
//     lease for this attempt, and writes the attempt row.
// Woken by the in-process nudge after an emit, by NOTIFY on PostgreSQL, and by polling.

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
}

interface ClaimedRow {
  id: string;
  event_id: string;
  workspace_id: string;
  destination: Destination;
  url: string;
  secret: string | null;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  attempt_count: number;
  max_attempts: number;
  first_attempt_at: Date;
  next_trigger: 'scheduled' | 'manual';
  payload: string;
  endpoint_secret: string | null;
  endpoint_previous_secret: string | null;
  endpoint_previous_expires_at: Date | null;
  /** The agent's secrets now (null when the agent row is unknown: the snapshot signs). */
  agent_secret: string | null;
  agent_previous_secret: string | null;
  agent_rotated_at: Date | null;
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
  const db = database.db;
  const holder = deps.holder ?? `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const leaseMs = webhooks.timeoutMs + LEASE_MARGIN_MS;
  const pollIntervalMs = deps.pollIntervalMs ?? 1000;
  const agentOffsets = attemptOffsets(webhooks.agentSchedule);
  const tenantOffsets = attemptOffsets(webhooks.tenantSchedule);

  // The claim and the result are each one statement (atomic on its own). On PostgreSQL they run
  // in a transaction that skips the WAL flush wait: a commit lost in a database crash only means
  // an attempt is sent again (at-least-once allows it), while events and deliveries are written
  // by the emitting transaction with full durability. One fsync less per claim and per result
  // is most of the cost at low concurrency. PGlite has no such wait: the statement runs alone.
  async function workerStatement<T>(fn: (executor: Executor) => Promise<T>): Promise<T> {
    if (database.kind !== 'postgres') return fn(db);
    return db.transaction().execute(async (tx) => {
      await sql`set local synchronous_commit = off`.execute(tx);
      return fn(tx);
    });
  }

  /** Rows whose worker died during their last allowed attempt: nothing is left to try. */
  async function buryLostLastAttempts(now: Date): Promise<void> {
    await db
      .updateTable('webhook_deliveries')
      .set({ status: 'dead', next_attempt_at: null, lease_holder: null, lease_expires_at: null, last_error: 'the worker was lost during the last attempt', updated_at: now })
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .where(sql<boolean>`attempt_count >= max_attempts`)
      .execute();
  }

  /** The claim: one statement, committed before any network I/O. */
  async function claim(limit: number): Promise<ClaimedRow[]> {
    const now = clock.now();
    const leaseUntil = new Date(now.getTime() + leaseMs);
    const result = await workerStatement((executor) => sql<ClaimedRow>`
      with due as materialized (
        select d.id from webhook_deliveries d
        where d.status = 'pending' and d.next_attempt_at <= ${now} and d.attempt_count < d.max_attempts
          and (d.ordering_key is null or not exists (
            select 1 from webhook_deliveries p
            where p.ordering_key = d.ordering_key and p.status = 'pending' and p.id < d.id
              and (p.attempt_count = 0 or (p.attempt_count = 1 and p.lease_expires_at > ${now}))))
        order by d.next_attempt_at, d.id
        limit ${limit}
        for update of d skip locked
      ), claimed as (
        update webhook_deliveries d set
          attempt_count = d.attempt_count + 1,
          lease_holder = ${holder},
          lease_expires_at = ${leaseUntil},
          next_attempt_at = ${leaseUntil},
          first_attempt_at = coalesce(d.first_attempt_at, ${now}),
          last_attempt_at = ${now},
          updated_at = ${now},
          url = case when d.destination = 'tenant'
            then coalesce((select w.url from webhook_endpoints w where w.workspace_id = d.workspace_id), d.url)
            else d.url end
        from due where d.id = due.id
        returning d.id, d.event_id, d.workspace_id, d.destination, d.agent_id, d.url, d.secret, d.previous_secret, d.previous_secret_expires_at, d.attempt_count, d.max_attempts,
          d.first_attempt_at, d.next_trigger
      )
      select c.*, e.payload, w.secret as endpoint_secret, w.previous_secret as endpoint_previous_secret,
        w.previous_secret_expires_at as endpoint_previous_expires_at,
        a.webhook_secret as agent_secret, a.previous_webhook_secret as agent_previous_secret, a.webhook_secret_rotated_at as agent_rotated_at
      from claimed c
      join webhook_events e on e.id = c.event_id
      left join webhook_endpoints w on c.destination = 'tenant' and w.workspace_id = c.workspace_id
      left join agents a on c.destination = 'agent' and a.id = c.agent_id and a.workspace_id = c.workspace_id
      order by c.id`.execute(executor));
    return result.rows.map((r) => ({
      ...r,
      first_attempt_at: new Date(r.first_attempt_at),
      previous_secret_expires_at: r.previous_secret_expires_at ? new Date(r.previous_secret_expires_at) : null,
      endpoint_previous_expires_at: r.endpoint_previous_expires_at ? new Date(r.endpoint_previous_expires_at) : null,
      agent_rotated_at: r.agent_rotated_at ? new Date(r.agent_rotated_at) : null,
    }));
  }

  async function send(row: ClaimedRow): Promise<AttemptResult> {
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
    const headers = signedHeaders({ id: row.event_id, body: row.payload, at: startedAt, secret, previousSecrets: previous, userAgent: USER_AGENT });
    const started = performance.now();
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

  /** Applies the result while this holder still owns this attempt's lease. */
  async function record(row: ClaimedRow, result: AttemptResult): Promise<boolean> {
    const now = clock.now();
    const plan = planNextAttempt({
      outcome: result.outcome,
      attemptCount: row.attempt_count,
      maxAttempts: row.max_attempts,
      firstAttemptAt: row.first_attempt_at,
      schedule: row.destination === 'agent' ? agentOffsets : tenantOffsets,
      jitter: row.destination === 'agent' ? 0.1 : 0,
      random: deps.random,
    });
    const lastError = result.error ?? (result.outcome.kind === 'succeeded' ? null : `HTTP ${result.statusCode}`);
    // One statement: the fenced update and the attempt row, so the result is applied whole or
    // not at all (a lost lease writes nothing).
    const applied = await workerStatement((executor) =>
      sql<{ id: string }>`
        with updated as (
          update webhook_deliveries set
            status = ${plan.status},
            next_attempt_at = ${plan.nextAttemptAt}::timestamptz,
            next_trigger = 'scheduled',
            lease_holder = null,
            lease_expires_at = null,
            last_status_code = ${result.statusCode}::integer,
            last_error = ${lastError}::text,
            updated_at = ${now}::timestamptz
          where id = ${row.id} and status = 'pending' and lease_holder = ${holder} and attempt_count = ${row.attempt_count}::integer
          returning id, workspace_id
        )
        insert into webhook_attempts (id, delivery_id, workspace_id, attempt, trigger, started_at, duration_ms, status_code, response_excerpt, error)
        select ${newId('att')}::text, u.id, u.workspace_id, ${row.attempt_count}::integer, ${row.next_trigger}::text, ${result.startedAt}::timestamptz,
          ${result.durationMs}::integer, ${result.statusCode}::integer, ${result.excerpt}::text, ${result.error}::text
        from updated u
        returning id`.execute(executor),
    );
    return applied.rows.length === 1;
  }

  async function deliver(row: ClaimedRow): Promise<void> {
    const result = await send(row);
    const applied = await record(row, result);
    if (!applied) logger.warn({ deliveryId: row.id, attempt: row.attempt_count }, 'webhook attempt result dropped: the lease was lost');
  }

  /** Claims what is due now (up to the concurrency setting), delivers it, returns how many were attempted. */
  async function runDueOnce(): Promise<number> {
    await buryLostLastAttempts(clock.now());
    const rows = await claim(webhooks.concurrency);
    await Promise.all(rows.map(deliver));
    return rows.length;
  }

  // The long-running loop: keeps up to `concurrency` deliveries in flight.
  let running = false;
  let inFlight = 0;
  let wakeUp: (() => void) | null = null;
  let pending = false;
  let loopDone: Promise<void> | null = null;
  let unsubscribe: (() => void) | null = null;
  let listener: pg.PoolClient | null = null;
  let lastBurial = 0;

  const signal = () => {
    pending = true;
    wakeUp?.();
  };

  function sleep(ms: number): Promise<void> {
    if (pending) {
      pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wakeUp = null;
        pending = false;
        resolve();
      }
      wakeUp = done;
    });
  }

  async function loop(): Promise<void> {
    while (running) {
      try {
        const free = webhooks.concurrency - inFlight;
        if (free > 0) {
          const now = clock.now();
          if (now.getTime() - lastBurial >= pollIntervalMs) {
            lastBurial = now.getTime();
            await buryLostLastAttempts(now);
          }
          const rows = await claim(free);
          for (const row of rows) {
            inFlight++;
            deliver(row)
              .catch((err) => logger.error({ err, deliveryId: row.id }, 'webhook delivery failed to record'))
              .finally(() => {
                inFlight--;
                signal();
              });
          }
          if (rows.length === free) continue;
        }
      } catch (err) {
        logger.error({ err }, 'webhook worker: claim failed');
      }
      if (!running) break;
      await sleep(pollIntervalMs);
    }
  }

  /** LISTEN on a dedicated pool connection (PostgreSQL); re-established while running if it drops. */
  async function listen(): Promise<void> {
    if (!database.pool || !running) return;
    let client: pg.PoolClient | null = null;
    try {
      client = await database.pool.connect();
      const own = client;
      own.on('notification', signal);
      own.on('error', (err) => {
        if (listener !== own) return;
        listener = null;
        own.release(err);
        logger.warn({ err }, 'webhook worker: LISTEN connection lost; polling continues, reconnecting');
        if (running) setTimeout(() => void listen(), 1000).unref();
      });
      await own.query(`LISTEN ${DELIVERY_CHANNEL}`);
      listener = own;
      // Something may have become due while there was no listener.
      signal();
    } catch (err) {
      logger.warn({ err }, 'webhook worker: LISTEN failed; polling continues');
      client?.release(err as Error);
      if (running) setTimeout(() => void listen(), 5000).unref();
    }
  }

  return {
    holder,
    runDueOnce,
    /** Starts the loop (idempotent). */
    async start(): Promise<void> {
      if (running) return;
      running = true;
      unsubscribe = deps.wake?.subscribe(signal) ?? null;
      await listen();
      loopDone = loop();
    },
    /** Stops claiming and waits for the deliveries in flight to be recorded. */
    async stop(): Promise<void> {
      if (!running) return;
      running = false;
      unsubscribe?.();
      wakeUp?.();
      await loopDone;
      const deadline = Date.now() + leaseMs;
      while (inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      const client = listener;
      listener = null;
      if (client) {
        client.removeAllListeners('notification');
        await client.query(`UNLISTEN ${DELIVERY_CHANNEL}`).catch(() => undefined);
        client.removeAllListeners('error');
        client.release();
      }
    },
  };
}

export type WebhookWorker = ReturnType<typeof createWebhookWorker>;
