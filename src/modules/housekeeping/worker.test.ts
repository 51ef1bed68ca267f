import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, UnknownRow } from 'kysely';
import pino from 'pino';
import { buildTestApp } from '../../../test/support/app.ts';
import { testDatabase } from '../../../test/support/database.ts';
import { insertUser, insertWorkspace } from '../../../test/support/rows.ts';
import { manualClock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db/schema.ts';
import { newId } from '../../platform/ids.ts';
import type { DeliveryStatus } from '../webhooks/tables.ts';
import { createHousekeepingWorker, DEFAULT_BATCH_SIZE } from './worker.ts';

// The housekeeping worker on the real database: rows on both sides of each cut-off, a clock the
// test sets, and the backlog gauge read through GET /metrics. The worker deletes across the whole
// database, so each test checks its own rows by id (counts are at least its own).

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const logger = pino({ level: 'silent' }) as unknown as FastifyBaseLogger;
const hex = () => randomBytes(8).toString('hex');

async function tenant(db: Database, now: Date) {
  const user = await insertUser(db, now, { email: `hk-${hex()}@example.com` });
  return { userId: user.id, workspaceId: await insertWorkspace(db, now, { name: 'hk' }) };
}

async function event(db: Database, workspaceId: string, createdAt: Date) {
  const id = newId('evt');
  await db.insertInto('webhook_events').values({ id, workspace_id: workspaceId, type: 'call.ended', payload: '{}', created_at: createdAt }).execute();
  return id;
}

async function delivery(db: Database, workspaceId: string, eventId: string, status: DeliveryStatus, updatedAt: Date, nextAttemptAt: Date | null = null) {
  const id = newId('dlv');
  await db
    .insertInto('webhook_deliveries')
    .values({
      id,
      event_id: eventId,
      workspace_id: workspaceId,
      event_type: 'call.ended',
      destination: 'tenant',
      url: 'http://127.0.0.1:9/hook',
      status,
      attempt_count: 1,
      max_attempts: 5,
      next_trigger: 'scheduled',
      next_attempt_at: nextAttemptAt,
      created_at: updatedAt,
      updated_at: updatedAt,
    })
    .execute();
  await db
    .insertInto('webhook_attempts')
    .values({ id: newId('att'), delivery_id: id, workspace_id: workspaceId, attempt: 1, trigger: 'scheduled', started_at: updatedAt, duration_ms: 5, status_code: 200 })
    .execute();
  return id;
}

async function remaining(db: Database, table: 'sessions' | 'invitations' | 'webhook_deliveries' | 'webhook_events', ids: string[]) {
  const rows = await db.selectFrom(table).select('id').where('id', 'in', ids).execute();
  return rows.map((r) => r.id).sort();
}

/** Observes every statement's affected-row count (a Kysely plugin; the worker runs unchanged). */
function affectedRowsRecorder() {
  const counts: number[] = [];
  const plugin: KyselyPlugin = {
    transformQuery: (args: PluginTransformQueryArgs) => args.node,
    async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
      if (args.result.numAffectedRows !== undefined) counts.push(Number(args.result.numAffectedRows));
      return args.result;
    },
  };
  return { plugin, counts };
}

describe('housekeeping worker', async () => {
  const database = await testDatabase();
  const db = database.db;

  it('deletes exactly the rows past their retention and keeps the rest', async () => {
    const now = new Date('2026-11-23T10:00:00.000Z');
    const clock = manualClock(now);
    const ago = (ms: number) => new Date(now.getTime() - ms);
    const later = (ms: number) => new Date(now.getTime() + ms);
    const { userId, workspaceId } = await tenant(db, ago(60 * DAY));

    // Idempotency keys: 24 h.
    const scope = `hk:${hex()}`;
    await db
      .insertInto('idempotency_keys')
      .values([
        { scope, key: 'old', request_hash: 'h', state: 'done', created_at: ago(24 * HOUR + MIN) },
        { scope, key: 'in-flight-old', request_hash: 'h', state: 'in_flight', created_at: ago(25 * HOUR) },
        { scope, key: 'fresh', request_hash: 'h', state: 'done', created_at: ago(24 * HOUR - MIN) },
      ])
      .execute();

    // Sessions: 30 days after expiry or revocation; refresh tokens once expired.
    const session = (expiresAt: Date, revokedAt: Date | null = null) => ({
      id: newId('ses'),
      user_id: userId,
      created_at: ago(90 * DAY),
      last_used_at: ago(40 * DAY),
      expires_at: expiresAt,
      revoked_at: revokedAt,
    });
    const expiredLongAgo = session(ago(30 * DAY + MIN));
    const revokedLongAgo = session(later(10 * DAY), ago(30 * DAY + MIN));
    const expiredRecently = session(ago(30 * DAY - MIN));
    const revokedRecently = session(later(10 * DAY), ago(DAY));
    const active = session(later(10 * DAY));
    await db.insertInto('sessions').values([expiredLongAgo, revokedLongAgo, expiredRecently, revokedRecently, active]).execute();
    const token = (sessionId: string, expiresAt: Date, usedAt: Date | null = null) => ({
      token_hash: hex(),
      session_id: sessionId,
      created_at: ago(2 * DAY),
      expires_at: expiresAt,
      used_at: usedAt,
    });
    const tokenExpired = token(active.id, ago(MIN), ago(2 * DAY));
    const tokenValid = token(active.id, later(DAY));
    const tokenOfRevokedSession = token(revokedLongAgo.id, later(DAY)); // goes with its session
    const tokenOfRecentSession = token(revokedRecently.id, later(DAY));
    await db.insertInto('refresh_tokens').values([tokenExpired, tokenValid, tokenOfRevokedSession, tokenOfRecentSession]).execute();

    // Mailed tokens: 7 days after expiry or use.
    const mailed = (expiresAt: Date, usedAt: Date | null = null) => ({
      token_hash: hex(),
      user_id: userId,
      purpose: 'password_reset' as const,
      created_at: ago(10 * DAY),
      expires_at: expiresAt,
      used_at: usedAt,
    });
    const mailedExpiredOld = mailed(ago(7 * DAY + MIN));
    const mailedUsedOld = mailed(ago(7 * DAY - HOUR), ago(7 * DAY + MIN));
    const mailedExpiredRecently = mailed(ago(7 * DAY - MIN));
    const mailedUsedRecently = mailed(later(HOUR), ago(DAY));
    const mailedValid = mailed(later(HOUR));
    await db.insertInto('email_tokens').values([mailedExpiredOld, mailedUsedOld, mailedExpiredRecently, mailedUsedRecently, mailedValid]).execute();

    // Invitations: 30 days after expiry, acceptance or revocation.
    const invitation = (expiresAt: Date, ended: { accepted_at?: Date; revoked_at?: Date } = {}) => ({
      id: newId('inv'),
      workspace_id: workspaceId,
      email: `inv-${hex()}@example.com`,
      role: 'member' as const,
      token_hash: hex(),
      created_at: ago(45 * DAY),
      expires_at: expiresAt,
      accepted_at: ended.accepted_at ?? null,
      revoked_at: ended.revoked_at ?? null,
    });
    const invExpiredOld = invitation(ago(30 * DAY + MIN));
    const invAcceptedOld = invitation(ago(25 * DAY), { accepted_at: ago(30 * DAY + MIN) });
    const invRevokedOld = invitation(ago(25 * DAY), { revoked_at: ago(30 * DAY + MIN) });
    const invExpiredRecently = invitation(ago(30 * DAY - MIN));
    const invAcceptedRecently = invitation(later(DAY), { accepted_at: ago(DAY) });
    const invPending = invitation(later(DAY));
    await db.insertInto('invitations').values([invExpiredOld, invAcceptedOld, invRevokedOld, invExpiredRecently, invAcceptedRecently, invPending]).execute();

    // Webhooks: succeeded deliveries 30 days after success; events once no delivery is left.
    const old = ago(30 * DAY + MIN);
    const eventAlone = await event(db, workspaceId, ago(31 * DAY));
    const succeededOld = await delivery(db, workspaceId, eventAlone, 'succeeded', old);
    const eventShared = await event(db, workspaceId, ago(31 * DAY));
    const succeededOldShared = await delivery(db, workspaceId, eventShared, 'succeeded', old);
    const failedOld = await delivery(db, workspaceId, eventShared, 'failed', ago(40 * DAY));
    const eventOthers = await event(db, workspaceId, ago(40 * DAY));
    const deadOld = await delivery(db, workspaceId, eventOthers, 'dead', ago(40 * DAY));
    const pendingOld = await delivery(db, workspaceId, eventOthers, 'pending', ago(40 * DAY), later(HOUR));
    const eventRecent = await event(db, workspaceId, ago(31 * DAY));
    const succeededRecently = await delivery(db, workspaceId, eventRecent, 'succeeded', ago(30 * DAY - MIN));
    const orphanOld = await event(db, workspaceId, ago(30 * DAY + MIN));
    const orphanRecent = await event(db, workspaceId, ago(30 * DAY - MIN));

    const worker = createHousekeepingWorker({ database, clock, logger });
    const deleted = await worker.runDueOnce();

    const keys = await db.selectFrom('idempotency_keys').select('key').where('scope', '=', scope).orderBy('key').execute();
    assert.deepEqual(
      keys.map((k) => k.key),
      ['fresh'],
    );

    assert.deepEqual(await remaining(db, 'sessions', [expiredLongAgo, revokedLongAgo, expiredRecently, revokedRecently, active].map((s) => s.id)), [expiredRecently.id, revokedRecently.id, active.id].sort());
    const tokens = await db
      .selectFrom('refresh_tokens')
      .select('token_hash')
      .where('token_hash', 'in', [tokenExpired, tokenValid, tokenOfRevokedSession, tokenOfRecentSession].map((x) => x.token_hash))
      .execute();
    assert.deepEqual(tokens.map((x) => x.token_hash).sort(), [tokenValid.token_hash, tokenOfRecentSession.token_hash].sort());

    const mailedLeft = await db
      .selectFrom('email_tokens')
      .select('token_hash')
      .where('token_hash', 'in', [mailedExpiredOld, mailedUsedOld, mailedExpiredRecently, mailedUsedRecently, mailedValid].map((x) => x.token_hash))
      .execute();
    assert.deepEqual(mailedLeft.map((x) => x.token_hash).sort(), [mailedExpiredRecently, mailedUsedRecently, mailedValid].map((x) => x.token_hash).sort());

    assert.deepEqual(
      await remaining(db, 'invitations', [invExpiredOld, invAcceptedOld, invRevokedOld, invExpiredRecently, invAcceptedRecently, invPending].map((i) => i.id)),
      [invExpiredRecently, invAcceptedRecently, invPending].map((i) => i.id).sort(),
    );

    // Pending, failed and dead deliveries stay whatever their age; so do the events they need.
    assert.deepEqual(
      await remaining(db, 'webhook_deliveries', [succeededOld, succeededOldShared, failedOld, deadOld, pendingOld, succeededRecently]),
      [failedOld, deadOld, pendingOld, succeededRecently].sort(),
    );
    const attempts = await db.selectFrom('webhook_attempts').select('delivery_id').where('delivery_id', 'in', [succeededOld, succeededOldShared, failedOld]).execute();
    assert.deepEqual(
      attempts.map((a) => a.delivery_id),
      [failedOld],
    );
    assert.deepEqual(
      await remaining(db, 'webhook_events', [eventAlone, eventShared, eventOthers, eventRecent, orphanOld, orphanRecent]),
      [eventShared, eventOthers, eventRecent, orphanRecent].sort(),
    );

    assert.ok(deleted.idempotency_keys >= 2);
    assert.ok(deleted.refresh_tokens >= 1); // the cascaded one is counted with its session
    assert.ok(deleted.sessions >= 2);
    assert.ok(deleted.email_tokens >= 2);
    assert.ok(deleted.invitations >= 3);
    assert.ok(deleted.webhook_deliveries >= 2);
    assert.ok(deleted.webhook_events >= 2);

    // Nothing more is due at the same time; a later run takes what has aged past its cut-off since.
    const again = await worker.runDueOnce();
    assert.ok(Object.values(again).every((n) => n === 0), JSON.stringify(again));
    clock.advance(2 * MIN);
    await worker.runDueOnce();
    assert.deepEqual(await remaining(db, 'webhook_deliveries', [succeededRecently]), []);
    assert.deepEqual(await remaining(db, 'webhook_events', [eventRecent, orphanRecent]), []);
    assert.deepEqual(await remaining(db, 'sessions', [expiredRecently.id]), []);
  });

  it('deletes in bounded batches until nothing past the cut-off is left', async () => {
    const now = new Date('2026-12-01T00:00:00.000Z');
    const { workspaceId } = await tenant(db, now);
    const old = new Date(now.getTime() - 31 * DAY);
    const scope = `hk:${hex()}`;
    const keyCount = DEFAULT_BATCH_SIZE * 2 + 345;
    await db
      .insertInto('idempotency_keys')
      .values(Array.from({ length: keyCount }, (_, i) => ({ scope, key: `k${i}`, request_hash: 'h', state: 'done' as const, created_at: old })))
      .execute();
    const deliveries: string[] = [];
    for (let i = 0; i < 25; i++) deliveries.push(await delivery(db, workspaceId, await event(db, workspaceId, old), 'succeeded', old));

    // The default batch size on the keys.
    const recorder = affectedRowsRecorder();
    const worker = createHousekeepingWorker({ database: { ...database, db: db.withPlugin(recorder.plugin) }, clock: manualClock(now), logger });
    const deleted = await worker.runDueOnce();
    assert.ok(deleted.idempotency_keys >= keyCount);
    assert.deepEqual(await db.selectFrom('idempotency_keys').select('key').where('scope', '=', scope).execute(), []);
    assert.ok(recorder.counts.length >= 3);
    assert.ok(Math.max(...recorder.counts) <= DEFAULT_BATCH_SIZE, `a statement deleted ${Math.max(...recorder.counts)} rows`);
    assert.deepEqual(await remaining(db, 'webhook_deliveries', deliveries), []);

    // A small batch size on deliveries and events.
    const more: string[] = [];
    const events: string[] = [];
    for (let i = 0; i < 25; i++) {
      events.push(await event(db, workspaceId, old));
      more.push(await delivery(db, workspaceId, events[i] as string, 'succeeded', old));
    }
    const small = affectedRowsRecorder();
    const smallWorker = createHousekeepingWorker({ database: { ...database, db: db.withPlugin(small.plugin) }, clock: manualClock(now), logger, batchSize: 10 });
    const result = await smallWorker.runDueOnce();
    assert.ok(result.webhook_deliveries >= 25 && result.webhook_events >= 25, JSON.stringify(result));
    assert.deepEqual(await remaining(db, 'webhook_deliveries', more), []);
    assert.deepEqual(await remaining(db, 'webhook_events', events), []);
    assert.ok(Math.max(...small.counts) <= 10, JSON.stringify(small.counts));
  });

  it('start() runs in the background until stop()', async () => {
    const now = new Date('2026-12-05T00:00:00.000Z');
    const scope = `hk:${hex()}`;
    await db.insertInto('idempotency_keys').values({ scope, key: 'old', request_hash: 'h', state: 'done', created_at: new Date(now.getTime() - 2 * DAY) }).execute();
    const worker = createHousekeepingWorker({ database, clock: manualClock(now), logger, intervalMs: 10 });
    worker.start();
    try {
      for (let i = 0; i < 200; i++) {
        const left = await db.selectFrom('idempotency_keys').select('key').where('scope', '=', scope).execute();
        if (left.length === 0) break;
        await new Promise((r) => setTimeout(r, 10));
      }
    } finally {
      await worker.stop();
    }
    assert.deepEqual(await db.selectFrom('idempotency_keys').select('key').where('scope', '=', scope).execute(), []);
  });
});

describe('webhook_oldest_pending_delivery_age_seconds', async () => {
  // Before any other test's rows, so "none due" is true of the whole database at this time.
  const clock = manualClock(new Date('2020-01-01T00:00:00.000Z'));
  const t = await buildTestApp({ clock });

  async function gauge(): Promise<number> {
    const res = await t.request({ method: 'GET', url: '/metrics' });
    assert.equal(res.statusCode, 200);
    const line = res.body.split('\n').find((l) => l.startsWith('webhook_oldest_pending_delivery_age_seconds '));
    assert.ok(line, 'gauge missing from /metrics');
    return Number(line.split(' ')[1]);
  }

  it('is 0 when nothing is due, then the age of the most overdue pending delivery', async () => {
    assert.equal(await gauge(), 0);
    const db = t.platform.db;
    const now = clock.now();
    const { workspaceId } = await tenant(db, now);
    const eventId = await event(db, workspaceId, new Date(now.getTime() - HOUR));
    await delivery(db, workspaceId, eventId, 'pending', new Date(now.getTime() - HOUR), new Date(now.getTime() + MIN)); // not due yet
    await delivery(db, workspaceId, eventId, 'failed', new Date(now.getTime() - HOUR), new Date(now.getTime() - HOUR)); // not pending
    assert.equal(await gauge(), 0);

    await delivery(db, workspaceId, eventId, 'pending', new Date(now.getTime() - HOUR), new Date(now.getTime() - 90_000));
    assert.equal(await gauge(), 90);
    clock.advance(2 * MIN); // the first pending one is now due too, but less overdue
    assert.equal(await gauge(), 210);
  });
});
