import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { sql } from 'kysely';
import { callOf, historyOf, insertCallRow, journalRig, ms, seedWorkspace, T0 } from '../../../test/support/call-rows.ts';
import { newId } from '../../platform/ids.ts';
import { claimQueuedCalls, findLostCalls } from './dialer-sql.ts';

// The calls dialer's statements (dialer-sql.ts) on the real database, rows written directly:
// which queued calls a claim moves to ringing (oldest first, never web, within each workspace's
// live-call limit and the claim's own limit), what it writes (the lease, the history row), and
// which live calls are lost (lease expired strictly before now). Both read the whole table: each
// test first ends every queued and live call left by the others.

const { db, clock } = await journalRig();
const input = { holder: 'D1', limit: 10, leaseMs: 20_000, defaultMaxConcurrent: 2 };

beforeEach(async () => {
  await db.updateTable('calls').set({ status: 'canceled' }).where('status', 'in', ['queued', 'ringing', 'in_progress']).execute();
  clock.set(T0);
});

const at = (offsetMs: number) => new Date(T0.getTime() + offsetMs);

describe('claimQueuedCalls', () => {
  it('moves queued calls to ringing under the lease: now + leaseMs exactly, started and renewed now, one history row', async () => {
    const ws = await seedWorkspace(db);
    const row = await insertCallRow(db, ws, 'queued');
    clock.advance(5000);
    const now = clock.now().getTime();
    const [claimed] = await claimQueuedCalls(db, clock, input);
    const after = await callOf(db, row.id);
    for (const r of [claimed, after]) {
      assert.deepEqual(
        [r.id, r.status, r.lease_holder, ms(r.lease_expires_at), ms(r.started_at), ms(r.last_renewed_at), ms(r.updated_at)],
        [row.id, 'ringing', 'D1', now + 20_000, now, now, now],
      );
    }
    assert.deepEqual(await historyOf(db, row.id), [[1, 'queued', T0.getTime()], [2, 'ringing', now]]);
  });

  it('the workspace limit (its own, else the default) less its live calls; oldest first, then by id; never web', async () => {
    const own = await seedWorkspace(db);
    await db.updateTable('workspaces').set({ max_concurrent_calls: 3 }).where('id', '=', own.workspaceId).execute();
    await insertCallRow(db, own, 'ringing');
    await insertCallRow(db, own, 'completed');
    const ids = [newId('call'), newId('call'), newId('call')];
    for (const id of [...ids].reverse()) await insertCallRow(db, own, 'queued', { id, created_at: at(-1000) });
    await insertCallRow(db, own, 'queued', { direction: 'web', created_at: at(-9000) });
    const byDefault = await seedWorkspace(db);
    await insertCallRow(db, byDefault, 'in_progress');
    const waiting = [await insertCallRow(db, byDefault, 'queued', { created_at: at(-10) }), await insertCallRow(db, byDefault, 'queued', { created_at: at(-20) })];
    const claimed = (await claimQueuedCalls(db, clock, input)).map((r) => r.id);
    assert.deepEqual(claimed.filter((id) => ids.includes(id)).sort(), ids.slice(0, 2), 'own limit 3 less one ringing');
    assert.deepEqual(claimed.filter((id) => !ids.includes(id)), [waiting[1].id], 'default 2 less one in progress, the older');
  });

  it('claims at most `limit` in all, and none when the limit is 0', async () => {
    const a = await seedWorkspace(db);
    const b = await seedWorkspace(db);
    for (const ws of [a, b]) for (let i = 0; i < 2; i++) await insertCallRow(db, ws, 'queued');
    assert.deepEqual(await claimQueuedCalls(db, clock, { ...input, limit: 0 }), []);
    assert.equal((await claimQueuedCalls(db, clock, { ...input, limit: 3 })).length, 3);
    assert.equal((await claimQueuedCalls(db, clock, { ...input, limit: 3 })).length, 1);
  });
});

describe('findLostCalls', () => {
  it('live calls whose lease expired strictly before now, the earliest expiry first, up to the limit', async () => {
    const ws = await seedWorkspace(db);
    const later = await insertCallRow(db, ws, 'in_progress', { lease_expires_at: at(-1) });
    const earlier = await insertCallRow(db, ws, 'ringing', { lease_expires_at: at(-5000) });
    await insertCallRow(db, ws, 'in_progress', { lease_expires_at: T0 });
    await insertCallRow(db, ws, 'in_progress', { lease_expires_at: at(1) });
    await insertCallRow(db, ws, 'queued', { lease_expires_at: at(-9000) });
    await insertCallRow(db, ws, 'completed', { lease_expires_at: at(-9000) });
    // A table scan (as on a large table) reads them in the table's order, the later first: only the order by sorts them.
    const [all, first] = await db.transaction().execute(async (tx) => {
      await sql`set local enable_indexscan = off`.execute(tx);
      await sql`set local enable_bitmapscan = off`.execute(tx);
      return [await findLostCalls(tx, clock), await findLostCalls(tx, clock, 1)];
    });
    assert.deepEqual(all.map((r) => r.id), [earlier.id, later.id]);
    assert.deepEqual(first.map((r) => r.id), [earlier.id]);
  });
});
