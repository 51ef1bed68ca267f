import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Insertable, sql } from 'kysely';
import { contactOf, insertCall, insertCampaign, insertContact, seedWorkspace, T0 } from '../../../test/support/campaign-rows.ts';
import { otherHandle, testDatabase, usingPostgres } from '../../../test/support/database.ts';
import { newId } from '../../platform/ids.ts';
import { beginAttempt, lockRunningCampaigns, pendingTimeZones, pickDueContacts } from './dialer-sql.ts';
import type { CampaignsTable } from './tables.ts';

// The dialer's statements (dialer-sql.ts) against the real database, rows written directly: which
// contacts are due (status, next_attempt_at, the calling window's zones), how many (the campaign's
// concurrency less its unended calls), in which order; which campaigns a pass locks; the zones of
// the pending contacts; what an attempt writes. dialer.test.ts drives them through live calls.

const database = await testDatabase();
const db = database.db;
const ids = (rows: Array<{ id: string }>) => rows.map((r) => r.id);

async function campaignWith(fields: Partial<Insertable<CampaignsTable>> = {}) {
  const ws = await seedWorkspace(db);
  return insertCampaign(db, { workspace_id: ws.workspaceId, agent_id: ws.agentId, ...fields });
}

describe('pickDueContacts: how many', () => {
  it('leaves room for the queued, ringing and in-progress calls of the campaign only', async () => {
    const campaign = await campaignWith({ concurrency: 5 });
    const other = await campaignWith();
    for (let i = 0; i < 6; i++) await insertContact(db, campaign);
    for (const status of ['queued', 'ringing', 'in_progress', 'completed', 'canceled', 'busy', 'failed'] as const) await insertCall(db, campaign, status);
    await insertCall(db, other, 'in_progress');
    await insertCall(db, campaign, 'ringing', null);
    assert.equal((await pickDueContacts(db, campaign, T0)).length, 2, '5 less the 3 unended calls');
  });

  it('counts each unended status: a queued, a ringing or an in-progress call alone takes a slot', async () => {
    for (const status of ['queued', 'ringing', 'in_progress'] as const) {
      const campaign = await campaignWith({ concurrency: 2 });
      for (let i = 0; i < 3; i++) await insertContact(db, campaign);
      await insertCall(db, campaign, status);
      assert.equal((await pickDueContacts(db, campaign, T0)).length, 1, status);
    }
  });

  it('picks nothing, without failing, when the campaign has more calls than its concurrency', async () => {
    const campaign = await campaignWith({ concurrency: 1 });
    await insertContact(db, campaign);
    for (let i = 0; i < 3; i++) await insertCall(db, campaign, 'queued');
    assert.deepEqual(await pickDueContacts(db, campaign, T0), []);
  });

  it('picks as many as the concurrency with no call running, the lowest ids first', async () => {
    const campaign = await campaignWith({ concurrency: 3 });
    const contactIds = Array.from({ length: 5 }, () => newId('cnt'));
    // Inserted highest id first, so the table's own order is not the id order.
    for (const id of [...contactIds].reverse()) await insertContact(db, campaign, { id });
    // A table scan (as on a large table) reads them in the table's order: only `order by id` sorts them.
    const picked = await db.transaction().execute(async (tx) => {
      await sql`set local enable_indexscan = off`.execute(tx);
      await sql`set local enable_bitmapscan = off`.execute(tx);
      return pickDueContacts(tx, campaign, T0);
    });
    assert.deepEqual(ids(picked), contactIds.slice(0, 3));
    assert.equal(picked[0].campaign_id, campaign.id);
  });
});

describe('pickDueContacts: which', () => {
  it('only pending contacts of this campaign', async () => {
    const campaign = await campaignWith({ concurrency: 20 });
    const other = await campaignWith({ concurrency: 20 });
    const pending = await insertContact(db, campaign);
    for (const status of ['calling', 'completed', 'failed', 'skipped', 'canceled'] as const) await insertContact(db, campaign, { status });
    await insertContact(db, other);
    assert.deepEqual(ids(await pickDueContacts(db, campaign, T0)), [pending.id]);
  });

  it('due when next_attempt_at is null, before now or exactly now; not a millisecond later', async () => {
    const campaign = await campaignWith({ concurrency: 20 });
    const never = await insertContact(db, campaign, { next_attempt_at: null });
    const before = await insertContact(db, campaign, { next_attempt_at: new Date(T0.getTime() - 60_000) });
    const exactly = await insertContact(db, campaign, { next_attempt_at: T0 });
    await insertContact(db, campaign, { next_attempt_at: new Date(T0.getTime() + 1) });
    assert.deepEqual(ids(await pickDueContacts(db, campaign, T0)), [never.id, before.id, exactly.id]);
  });

  it('with a window: the contacts of its open zones, and those without a zone only when nullZone', async () => {
    const campaign = await campaignWith({ concurrency: 20 });
    const paris = await insertContact(db, campaign, { timezone: 'Europe/Paris' });
    const tokyo = await insertContact(db, campaign, { timezone: 'Asia/Tokyo' });
    const none = await insertContact(db, campaign, { timezone: null });
    const york = await insertContact(db, campaign, { timezone: 'America/New_York' });
    const pick = async (zones: string[], nullZone: boolean) => ids(await pickDueContacts(db, campaign, T0, { zones, nullZone }));
    assert.deepEqual(await pick(['Europe/Paris'], false), [paris.id]);
    assert.deepEqual(await pick(['Europe/Paris', 'Asia/Tokyo'], false), [paris.id, tokyo.id]);
    assert.deepEqual(await pick([], true), [none.id]);
    assert.deepEqual(await pick(['America/New_York'], true), [none.id, york.id]);
    assert.deepEqual(await pick([], false), []);
    assert.deepEqual(ids(await pickDueContacts(db, campaign, T0)), [paris.id, tokyo.id, none.id, york.id], 'no window: every zone');
  });
});

describe('pickDueContacts: locks', { skip: !usingPostgres() && 'one connection on PGlite' }, () => {
  it('skips the contacts another transaction holds (SKIP LOCKED) and locks those it picks', async () => {
    const campaign = await campaignWith({ concurrency: 20 });
    const held = await insertContact(db, campaign);
    const free = await insertContact(db, campaign);
    const other = await otherHandle();
    // Waiting for a lock would wait for this test itself: lock_timeout turns that wait into an error.
    const pickElsewhere = () =>
      other.db.transaction().execute(async (tx2) => {
        await sql`set local lock_timeout = '2s'`.execute(tx2);
        return ids(await pickDueContacts(tx2, campaign, T0));
      });
    await db.transaction().execute(async (tx) => {
      await tx.selectFrom('campaign_contacts').select('id').where('id', '=', held.id).forUpdate().execute();
      assert.deepEqual(await pickElsewhere(), [free.id]);
    });
    await db.transaction().execute(async (tx) => {
      assert.deepEqual(ids(await pickDueContacts(tx, campaign, T0)), [held.id, free.id]);
      assert.deepEqual(await pickElsewhere(), [], 'the picked rows are locked until commit');
    });
  });
});

describe('lockRunningCampaigns', () => {
  it('running campaigns only, in id order from the first after the cursor, round to the first, at most `limit`', async () => {
    await db.updateTable('campaigns').set({ status: 'completed' }).where('status', '=', 'running').execute();
    const [firstId, secondId, thirdId] = [newId('cmp'), newId('cmp'), newId('cmp')];
    // Written highest id first, so the table's own order is not the id order.
    const third = await campaignWith({ id: thirdId });
    const second = await campaignWith({ id: secondId });
    const first = await campaignWith({ id: firstId });
    for (const status of ['draft', 'ready', 'paused', 'completed', 'canceled'] as const) await campaignWith({ status });
    const scanned = (afterId?: string) =>
      db.transaction().execute(async (tx) => {
        await sql`set local enable_indexscan = off`.execute(tx);
        await sql`set local enable_bitmapscan = off`.execute(tx);
        return lockRunningCampaigns(tx, 10, afterId);
      });
    assert.deepEqual(ids(await scanned()), [first.id, second.id, third.id]);
    assert.deepEqual(ids(await scanned(first.id)), [second.id, third.id, first.id], 'after the first: round to it last');
    assert.deepEqual(ids(await scanned(second.id)), [third.id, first.id, second.id]);
    assert.deepEqual(ids(await scanned(third.id)), [first.id, second.id, third.id], 'after the last: from the first');
    assert.deepEqual(ids(await lockRunningCampaigns(db, 2)), [first.id, second.id]);
    assert.deepEqual(ids(await lockRunningCampaigns(db, 2, second.id)), [third.id, first.id]);
    const row = (await lockRunningCampaigns(db, 1))[0];
    assert.equal(row.workspace_id, first.workspace_id);
    assert.equal(row.concurrency, first.concurrency);
  });
});

describe('pendingTimeZones', () => {
  it('each zone of the pending contacts once, null among them', async () => {
    const campaign = await campaignWith();
    const other = await campaignWith();
    await insertContact(db, campaign, { timezone: 'Europe/Paris' });
    await insertContact(db, campaign, { timezone: 'Europe/Paris' });
    await insertContact(db, campaign, { timezone: null });
    await insertContact(db, campaign, { timezone: 'Asia/Tokyo', status: 'calling' });
    await insertContact(db, other, { timezone: 'America/New_York' });
    const zones = await pendingTimeZones(db, campaign.id);
    assert.equal(zones.length, 2);
    assert.deepEqual(new Set(zones), new Set(['Europe/Paris', null]));
    assert.deepEqual(await pendingTimeZones(db, newId('cmp')), []);
  });
});

describe('beginAttempt', () => {
  it('a pending contact: calling, one more attempt, the call, no next attempt; and its attempt row, queued', async () => {
    const campaign = await campaignWith();
    const contact = await insertContact(db, campaign, { attempts: 1, next_attempt_at: T0 });
    const now = new Date(T0.getTime() + 5000);
    const callId = newId('call');
    await beginAttempt(db, contact, callId, now);
    const after = await contactOf(db, contact.id);
    assert.deepEqual({ ...after, updated_at: new Date(after.updated_at).getTime() }, { ...contact, status: 'calling', attempts: 2, call_id: callId, next_attempt_at: null, updated_at: now.getTime() });
    const attempt = await db.selectFrom('campaign_attempts').selectAll().where('contact_id', '=', contact.id).execute();
    assert.deepEqual(
      attempt.map((a) => ({ ...a, created_at: new Date(a.created_at).getTime() })),
      [{ call_id: callId, contact_id: contact.id, campaign_id: campaign.id, attempt: 2, status: 'queued', end_reason: null, created_at: now.getTime(), ended_at: null }],
    );
  });

  it('leaves a contact no longer pending as it is', async () => {
    const campaign = await campaignWith();
    for (const status of ['canceled', 'calling', 'completed'] as const) {
      const contact = await insertContact(db, campaign, { status, attempts: 1 });
      await beginAttempt(db, contact, newId('call'), T0);
      assert.deepEqual(await contactOf(db, contact.id), contact, status);
    }
  });
});
