import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { insertCallRow, seedWorkspace, seedWorkspacePair, T0 } from '../../../test/support/call-rows.ts';
import { insertCampaign } from '../../../test/support/campaign-rows.ts';
import { refusal } from '../../../test/support/campaign-service-rig.ts';
import { testDatabase } from '../../../test/support/database.ts';
import { manualClock } from '../../platform/clock.ts';
import { type PageRequest, encodeCursor, pageRequest } from '../../platform/pagination.ts';
import { createCallReads } from './reads.ts';
import { type CallRow, createCallsRepo } from './repo.ts';
import type { CallListQuery } from './schemas.ts';
import { createLinkSigner } from './signed-links.ts';

// The calls' reads (reads.ts over repo.ts), on the real database with rows written directly: the
// list's filters one by one, its paging and order, workspace isolation of every read, one call,
// its history, DELETE of a live call, a signed link's call. The CSV export and presentCall are in
// reads-export-rules.test.ts.

const { db } = await testDatabase();
const clock = manualClock(new Date(T0.getTime() + 60_000));
const links = createLinkSigner({ secret: 'test-secret', publicBaseUrl: 'https://api.test', clock });
const repo = createCallsRepo(db);
const removed: string[] = [];
const reads = createCallReads({
  repo,
  links,
  removeContent: async (workspaceId, call) => {
    removed.push(`${workspaceId}/${call.id}`);
    await repo.clearContent(workspaceId, call.id, clock.now());
  },
});

const at = (minutes: number) => new Date(T0.getTime() + minutes * 60_000);
const idsOf = (page: { data: Array<{ id: string }> }) => page.data.map((c) => c.id);
const desc = (rows: CallRow[]) => rows.map((r) => r.id).sort().reverse();
const all: PageRequest = { limit: 100 };

describe('the list: filters', () => {
  it('each filter keeps only the matching calls of the workspace, newest first', async () => {
    const { ws, other, agent2 } = await seedWorkspacePair(db);
    const campaign = await insertCampaign(db, { workspace_id: ws.workspaceId, agent_id: ws.agentId });
    const a = await insertCallRow(db, ws, 'completed', { created_at: at(1) });
    const b = await insertCallRow(db, { ...ws, agentId: agent2 }, 'failed', { created_at: at(2), direction: 'inbound', from_number: '+15550100777' });
    const c = await insertCallRow(db, ws, 'completed', { created_at: at(3), campaign_id: campaign.id, to_number: '+15550100888' });
    await insertCallRow(db, other, 'completed', { created_at: at(2), from_number: '+15550100777', to_number: '+15550100888' });
    const list = async (query: CallListQuery) => idsOf(await reads.list(ws.workspaceId, query, all));
    assert.deepEqual(await list({}), desc([a, b, c]));
    assert.deepEqual(await list({ agent_id: agent2 }), [b.id]);
    assert.deepEqual(await list({ status: 'completed' }), desc([a, c]));
    assert.deepEqual(await list({ direction: 'inbound' }), [b.id]);
    assert.deepEqual(await list({ direction: 'outbound' }), desc([a, c]));
    assert.deepEqual(await list({ campaign_id: campaign.id }), [c.id]);
    assert.deepEqual(await list({ from: '+15550100777' }), [b.id]);
    assert.deepEqual(await list({ to: '+15550100888' }), [c.id]);
    // Numbers are normalised to E.164 before they are compared.
    assert.deepEqual(await list({ from: '+1 555-010-0777' }), [b.id]);
    assert.deepEqual(await list({ to: '+1 (555) 010-0888' }), [c.id]);
    // A filter that is not a number is compared as given (and finds nothing).
    assert.deepEqual(await list({ to: 'abc' }), []);
    assert.deepEqual(await list({ status: 'completed', agent_id: ws.agentId, to: '+15550002222' }), [a.id]);
  });

  it('created_after and created_before are strict bounds', async () => {
    const ws = await seedWorkspace(db);
    const a = await insertCallRow(db, ws, 'completed', { created_at: at(1) });
    const b = await insertCallRow(db, ws, 'completed', { created_at: at(2) });
    const c = await insertCallRow(db, ws, 'completed', { created_at: at(3) });
    const list = async (query: CallListQuery) => idsOf(await reads.list(ws.workspaceId, query, all));
    assert.deepEqual(await list({ created_after: at(1).toISOString() }), desc([b, c]));
    assert.deepEqual(await list({ created_before: at(3).toISOString() }), desc([a, b]));
    assert.deepEqual(await list({ created_after: at(1).toISOString(), created_before: at(3).toISOString() }), [b.id]);
    assert.deepEqual(await list({ created_after: at(0).toISOString() }), desc([a, b, c]));
  });
});

describe('the list: paging', () => {
  it('pages of `limit`, newest first, the cursor the last id of the page; the last page has no cursor', async () => {
    const ws = await seedWorkspace(db);
    const rows = [];
    for (let i = 0; i < 5; i += 1) rows.push(await insertCallRow(db, ws, 'completed'));
    const ids = desc(rows);
    const first = await reads.list(ws.workspaceId, {}, pageRequest({ limit: 2 }));
    assert.deepEqual(idsOf(first), ids.slice(0, 2));
    assert.equal(first.has_more, true);
    assert.equal(first.next_cursor, encodeCursor(ids[1]));
    const second = await reads.list(ws.workspaceId, {}, pageRequest({ limit: 2, cursor: first.next_cursor as string }));
    assert.deepEqual(idsOf(second), ids.slice(2, 4));
    const third = await reads.list(ws.workspaceId, {}, pageRequest({ limit: 2, cursor: second.next_cursor as string }));
    assert.deepEqual(idsOf(third), ids.slice(4));
    assert.equal(third.has_more, false);
    assert.equal(third.next_cursor, null);
    // Exactly `limit` left: no more.
    const exact = await reads.list(ws.workspaceId, {}, { limit: 5 });
    assert.equal(exact.data.length, 5);
    assert.equal(exact.has_more, false);
  });

  it('the repo answers limit + 1 rows, below the cursor (strictly), ordered by id', async () => {
    const ws = await seedWorkspace(db);
    const rows = [];
    for (let i = 0; i < 4; i += 1) rows.push(await insertCallRow(db, ws, 'queued'));
    const ids = desc(rows);
    assert.deepEqual((await repo.list(ws.workspaceId, {}, { limit: 2 })).map((r) => r.id), ids.slice(0, 3));
    assert.deepEqual((await repo.list(ws.workspaceId, {}, { limit: 9, after: ids[1] })).map((r) => r.id), ids.slice(2));
  });
});

describe('workspace isolation', () => {
  it('another workspace\'s call is not found by get, events, DELETE, nor listed', async () => {
    const ws = await seedWorkspace(db);
    const other = await seedWorkspace(db);
    const theirs = await insertCallRow(db, other, 'completed');
    assert.deepEqual(await refusal(reads.get(ws.workspaceId, theirs.id)), { status: 404, code: 'not_found', detail: 'call not found' });
    assert.equal((await refusal(reads.callOf(ws.workspaceId, theirs.id))).status, 404);
    assert.equal((await refusal(reads.events(ws.workspaceId, theirs.id))).status, 404);
    assert.equal((await refusal(reads.removeContent(ws.workspaceId, theirs.id))).status, 404);
    assert.equal(await repo.get(ws.workspaceId, theirs.id), undefined);
    assert.deepEqual(idsOf(await reads.list(ws.workspaceId, {}, all)), []);
    assert.equal((await reads.get(other.workspaceId, theirs.id)).id, theirs.id);
    await repo.clearContent(ws.workspaceId, theirs.id, clock.now());
    assert.equal((await repo.getAny(theirs.id))?.content_deleted_at, null);
  });

  it('hasLiveCallOn: a ringing or in-progress call from or to the number, in this workspace only', async () => {
    const ws = await seedWorkspace(db);
    const other = await seedWorkspace(db);
    await insertCallRow(db, ws, 'ringing', { from_number: '+15550109001', to_number: '+15550109002' });
    await insertCallRow(db, ws, 'in_progress', { from_number: '+15550109003', to_number: '+15550109004' });
    await insertCallRow(db, ws, 'queued', { from_number: '+15550109005', to_number: '+15550109005' });
    await insertCallRow(db, ws, 'completed', { from_number: '+15550109006', to_number: '+15550109006' });
    await insertCallRow(db, other, 'in_progress', { from_number: '+15550109007', to_number: '+15550109007' });
    const live = (n: string) => reads.hasLiveCallOn(ws.workspaceId, n);
    assert.equal(await live('+15550109001'), true);
    assert.equal(await live('+15550109002'), true);
    assert.equal(await live('+15550109003'), true);
    assert.equal(await live('+15550109004'), true);
    assert.equal(await live('+15550109005'), false);
    assert.equal(await live('+15550109006'), false);
    assert.equal(await live('+15550109007'), false);
  });
});

describe('one call', () => {
  it('get presents the row; events answers the history oldest first', async () => {
    const ws = await seedWorkspace(db);
    const row = await insertCallRow(db, ws, 'queued');
    await db.insertInto('call_status_events').values({ call_id: row.id, seq: 2, status: 'ringing', at: at(2) }).execute();
    await db.insertInto('call_status_events').values({ call_id: row.id, seq: 3, status: 'in_progress', at: at(1) }).execute();
    assert.equal((await reads.get(ws.workspaceId, row.id)).status, 'queued');
    assert.deepEqual(await reads.events(ws.workspaceId, row.id), {
      data: [
        { status: 'queued', at: T0.toISOString() },
        { status: 'ringing', at: at(2).toISOString() },
        { status: 'in_progress', at: at(1).toISOString() },
      ],
    });
    assert.equal((await refusal(reads.get(ws.workspaceId, 'call_missing'))).code, 'not_found');
  });

  it('DELETE is refused while the call is queued, ringing or in progress (409); an ended call loses its content', async () => {
    const ws = await seedWorkspace(db);
    for (const status of ['queued', 'ringing', 'in_progress'] as const) {
      const row = await insertCallRow(db, ws, status);
      assert.deepEqual(await refusal(reads.removeContent(ws.workspaceId, row.id)), { status: 409, code: 'invalid_state', detail: 'the call has not ended yet; hang it up first' });
    }
    assert.deepEqual(removed.filter((r) => r.startsWith(ws.workspaceId)), []);
    for (const status of ['completed', 'failed', 'canceled', 'no_answer'] as const) {
      const row = await insertCallRow(db, ws, status, { transcript: JSON.stringify([{ role: 'agent', text: 'Hello' }]), recording_key: 'rec/1', recording_bytes: 10 });
      await reads.removeContent(ws.workspaceId, row.id);
      assert.ok(removed.includes(`${ws.workspaceId}/${row.id}`), status);
      const after = (await repo.get(ws.workspaceId, row.id)) as CallRow;
      assert.deepEqual(after.transcript, []);
      assert.equal(after.recording_key, null);
      assert.equal(after.recording_bytes, null);
      assert.equal(new Date(after.content_deleted_at as Date).getTime(), clock.now().getTime());
      assert.equal(new Date(after.updated_at).getTime(), clock.now().getTime());
    }
  });
});

describe('reads by id alone', () => {
  it('a signed link finds the call of any workspace; an unsigned, tampered or expired one is 401', async () => {
    const ws = await seedWorkspace(db);
    const row = await insertCallRow(db, ws, 'completed');
    const path = `/v1/calls/${row.id}/transcript`;
    const url = new URL(links.sign(path));
    const expires = url.searchParams.get('expires') as string;
    const signature = url.searchParams.get('signature') as string;
    assert.equal((await reads.signedCallOf(path, row.id, expires, signature)).id, row.id);
    const unauthorized = { status: 401, code: 'unauthorized', detail: 'the link is expired or its signature is not valid' };
    assert.deepEqual(await refusal(reads.signedCallOf(path, row.id, undefined, undefined)), unauthorized);
    assert.deepEqual(await refusal(reads.signedCallOf(`/v1/calls/${row.id}/recording.mp3`, row.id, expires, signature)), unauthorized);
    const missing = `/v1/calls/call_missing/transcript`;
    const signed = new URL(links.sign(missing)).searchParams;
    assert.deepEqual(await refusal(reads.signedCallOf(missing, 'call_missing', signed.get('expires') as string, signed.get('signature') as string)), { status: 404, code: 'not_found', detail: 'call not found' });
    assert.equal((await reads.row(row.id))?.id, row.id);
    assert.equal(await reads.row('call_missing'), undefined);
  });

  it('a carrier\'s call: by our id, else by the carrier\'s, of that provider only', async () => {
    const ws = await seedWorkspace(db);
    const row = await insertCallRow(db, ws, 'ringing', { provider: 'twilio', provider_call_id: 'CA123' });
    assert.equal((await reads.carrierCall('twilio', { callId: row.id }))?.id, row.id);
    assert.equal((await reads.carrierCall('twilio', { carrierCallId: 'CA123' }))?.id, row.id);
    assert.equal((await reads.carrierCall('twilio', { callId: row.id, carrierCallId: 'CA999' }))?.id, row.id);
    assert.equal(await reads.carrierCall('sandbox', { callId: row.id }), undefined);
    assert.equal(await reads.carrierCall('twilio', { carrierCallId: 'CA999' }), undefined);
    assert.equal(await reads.carrierCall('twilio', {}), undefined);
  });

  it('a campaign\'s queued calls only', async () => {
    const ws = await seedWorkspace(db);
    const campaign = await insertCampaign(db, { workspace_id: ws.workspaceId, agent_id: ws.agentId });
    const queued = await insertCallRow(db, ws, 'queued', { campaign_id: campaign.id });
    await insertCallRow(db, ws, 'ringing', { campaign_id: campaign.id });
    await insertCallRow(db, ws, 'queued');
    assert.deepEqual((await reads.queuedOfCampaign(campaign.id)).map((r) => r.id), [queued.id]);
  });
});
