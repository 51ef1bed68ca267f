import type { FastifyBaseLogger } from 'fastify';
import { type RawBuilder, sql } from 'kysely';
import type { Clock } from '../../platform/clock.ts';
import type { DatabaseHandle } from '../../platform/db/database.ts';
import { periodicJob } from '../../platform/jobs/periodic.ts';
import { createJobRunner } from '../../platform/jobs/runner.ts';

// The housekeeping worker: deletes rows whose purpose is over, so tables do not grow forever.
// Each kind is deleted in bounded batches (one short auto-committed statement per batch, looping
// until a batch comes back short), so no statement holds locks for long and PGlite's single
// connection is never held by one big delete. Cut-offs come from the injected clock, never from
// the database's now(), so tests can move time.
//
// Each batch picks its rows with FOR UPDATE SKIP LOCKED and the DELETE repeats the conditions:
// a row another transaction is changing (a succeeded delivery being retried by its user, say) is
// left for the next run instead of being deleted from under it, and several instances can run
// housekeeping at once without waiting on each other.

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

export interface Retention {
  /** Idempotency keys: the replay window (24 h in DESIGN). */
  idempotencyKeysMs: number;
  /** Sessions, after they expired or were revoked (their refresh tokens cascade). */
  sessionsMs: number;
  /** Mailed tokens, after they expired or were used. */
  emailTokensMs: number;
  /** Invitations, after they expired, were accepted or were revoked. */
  invitationsMs: number;
  /** Succeeded webhook deliveries (with their attempts), and events left with no delivery. */
  webhookDeliveriesMs: number;
  /** Client-side events of POST /v1/events, after they were received. */
  publicEventsMs: number;
}

export const DEFAULT_RETENTION: Retention = {
  idempotencyKeysMs: 24 * HOUR_MS,
  sessionsMs: 30 * DAY_MS,
  emailTokensMs: 7 * DAY_MS,
  invitationsMs: 30 * DAY_MS,
  webhookDeliveriesMs: 30 * DAY_MS,
  publicEventsMs: 90 * DAY_MS,
};

export const DEFAULT_BATCH_SIZE = 1000;
export const DEFAULT_INTERVAL_MS = 10 * 60_000;

export const HOUSEKEEPING_KINDS = [
  'idempotency_keys',
  'refresh_tokens',
  'sessions',
  'email_tokens',
  'invitations',
  'webhook_deliveries',
  'webhook_events',
  'public_events',
] as const;
export type HousekeepingKind = (typeof HOUSEKEEPING_KINDS)[number];

export interface HousekeepingDeps {
  database: DatabaseHandle;
  clock: Clock;
  logger: FastifyBaseLogger;
  retention?: Partial<Retention>;
  /** Time between runs of the loop started by start(). */
  intervalMs?: number;
  /** Rows per DELETE statement. */
  batchSize?: number;
}

export function createHousekeepingWorker(deps: HousekeepingDeps) {
  const { database, clock, logger } = deps;
  const db = database.db;
  const retention: Retention = { ...DEFAULT_RETENTION, ...deps.retention };
  const intervalMs = deps.intervalMs ?? DEFAULT_INTERVAL_MS;
  const batchSize = deps.batchSize ?? DEFAULT_BATCH_SIZE;

  const before = (now: Date, ms: number) => new Date(now.getTime() - ms);

  /**
   * One batch of `table`: at most batchSize rows matching `where`, picked (and locked) once in a
   * materialized CTE. Not `id IN (SELECT … LIMIT n FOR UPDATE SKIP LOCKED)`: the planner may
   * rescan such a subquery, and each rescan skips the rows this statement already deleted and
   * picks the next n, so one statement would delete them all.
   */
  function batchDelete(table: HousekeepingKind, keys: string[], where: RawBuilder<unknown>): () => Promise<number> {
    const columns = sql.join(keys.map((k) => sql.ref(k)));
    const match = sql.join(
      keys.map((k) => sql`${sql.ref(`${table}.${k}`)} = ${sql.ref(`batch.${k}`)}`),
      sql` and `,
    );
    const statement = sql`
      with batch as materialized (
        select ${columns} from ${sql.table(table)} where ${where}
        limit ${batchSize} for update skip locked)
      delete from ${sql.table(table)} using batch where ${match} and ${where}`;
    return async () => Number((await statement.execute(db)).numAffectedRows ?? 0n);
  }

  /** The batch statement of each kind at time `now`. */
  function batchFor(kind: HousekeepingKind, now: Date): () => Promise<number> {
    switch (kind) {
      case 'idempotency_keys':
        return batchDelete(kind, ['scope', 'key'], sql`created_at < ${before(now, retention.idempotencyKeysMs)}`);
      case 'refresh_tokens':
        // An expired refresh token is refused whatever its state, so it is of no more use.
        return batchDelete(kind, ['token_hash'], sql`expires_at < ${now}`);
      case 'sessions': {
        const cutoff = before(now, retention.sessionsMs);
        return batchDelete(kind, ['id'], sql`(expires_at < ${cutoff} or revoked_at < ${cutoff})`);
      }
      case 'email_tokens': {
        const cutoff = before(now, retention.emailTokensMs);
        return batchDelete(kind, ['token_hash'], sql`(expires_at < ${cutoff} or used_at < ${cutoff})`);
      }
      case 'invitations': {
        const cutoff = before(now, retention.invitationsMs);
        return batchDelete(kind, ['id'], sql`(expires_at < ${cutoff} or accepted_at < ${cutoff} or revoked_at < ${cutoff})`);
      }
      case 'webhook_deliveries':
        // Only succeeded deliveries: pending ones are the queue, failed and dead ones the
        // dead-letter list users replay. updated_at is when the success was recorded (a retry
        // by the user moves it back to pending). Attempts go with them (ON DELETE CASCADE).
        return batchDelete(kind, ['id'], sql`(status = 'succeeded' and updated_at < ${before(now, retention.webhookDeliveriesMs)})`);
      case 'webhook_events':
        // Events stay while any delivery (of any status) still needs their payload.
        return batchDelete(
          kind,
          ['id'],
          sql`(created_at < ${before(now, retention.webhookDeliveriesMs)} and not exists (select 1 from webhook_deliveries d where d.event_id = webhook_events.id))`,
        );
      case 'public_events':
        return batchDelete(kind, ['id'], sql`received_at < ${before(now, retention.publicEventsMs)}`);
    }
  }

  /**
   * Deletes everything past its retention at the clock's current time (deliveries before
   * events, so events they leave orphaned go in the same run). Returns rows deleted per kind.
   */
  function runDueOnce(): Promise<Record<HousekeepingKind, number>> {
    return run(() => false);
  }

  /** One pass; `stop` is checked between batches so a shutdown does not wait for a long backlog. */
  async function run(stop: () => boolean): Promise<Record<HousekeepingKind, number>> {
    const now = clock.now();
    const deleted = Object.fromEntries(HOUSEKEEPING_KINDS.map((k) => [k, 0])) as Record<HousekeepingKind, number>;
    for (const kind of HOUSEKEEPING_KINDS) {
      const batch = batchFor(kind, now);
      for (;;) {
        const n = await batch();
        deleted[kind] += n;
        if (n < batchSize || stop()) break;
      }
      if (stop()) break;
    }
    return deleted;
  }

  // A periodic job on the runner: a first pass shortly after start, then one every intervalMs
  // after the previous pass ended. Stopping aborts the signal: the pass ends after its batch.
  const runner = createJobRunner({
    database,
    clock,
    logger,
    job: periodicJob({
      name: 'housekeeping',
      intervalMs,
      firstDelayMs: Math.min(intervalMs, 5000),
      async run(signal) {
        const deleted = await run(() => signal.aborted);
        const total = Object.values(deleted).reduce((a, b) => a + b, 0);
        if (total > 0) logger.info({ deleted }, 'housekeeping: expired rows deleted');
      },
    }),
  });

  return {
    runDueOnce,
    /** Starts the loop (idempotent): a first run shortly after start, then one every intervalMs. */
    start(): void {
      void runner.start();
    },
    /** Stops the loop; a run in progress ends after its current batch. */
    stop: runner.stop,
  };
}

export type HousekeepingWorker = ReturnType<typeof createHousekeepingWorker>;
