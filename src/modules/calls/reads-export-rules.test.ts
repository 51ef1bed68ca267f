import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { insertCallRow, seedWorkspace, seedWorkspacePair, T0 } from '../../../test/support/call-rows.ts';
import { insertCampaign } from '../../../test/support/campaign-rows.ts';
import { testDatabase } from '../../../test/support/database.ts';
import { manualClock } from '../../platform/clock.ts';
import { newId } from '../../platform/ids.ts';
import { createCallFigures } from './figures.ts';
import { createCallReads, EXPORT_MAX_ROWS } from './reads.ts';
import { type CallRow, createCallsRepo, presentCall } from './repo.ts';
import { createLinkSigner } from './signed-links.ts';

// The calls' CSV export and API view (reads.ts, repo.ts's presentCall), and the figures other
// modules show (figures.ts: counts by status and day, spend per agent, sessions' time and cost),
// on the real database with rows written directly. Each test reads a workspace of its own.

const { db } = await testDatabase();
const clock = manualClock(new Date(T0.getTime() + 60_000));
const links = createLinkSigner({ secret: 'test-secret', publicBaseUrl: 'https://api.test', clock });
const repo = createCallsRepo(db);
const reads = createCallReads({ repo, links, removeContent: async () => {} });
const figures = createCallFigures();

const at = (minutes: number) => new Date(T0.getTime() + minutes * 60_000);

async function textOf(stream: AsyncIterable<unknown>) {
  let text = '';
  for await (const chunk of stream) text += String(chunk);
  return text;
}

describe('the CSV export', () => {
  it('the list\'s calls newest first, a column per extracted field any has (sorted), values as text', async () => {
    const ws = await seedWorkspace(db);
    const other = await seedWorkspace(db);
    const a = await insertCallRow(db, ws, 'completed', {
      created_at: at(1),
      billed_seconds: 61,
      cost_micros: 91_500,
      end_reason: 'caller_goodbye',
      extracted: JSON.stringify({ zeta: 'z', alpha: 3, nested: { a: 1 }, none: null }),
    });
    const b = await insertCallRow(db, ws, 'failed', { created_at: at(2), direction: 'inbound', extracted: JSON.stringify({ beta: true }) });
    await insertCallRow(db, ws, 'completed', { created_at: at(3), direction: 'inbound', extracted: JSON.stringify({ ignored: 'x' }) });
    await insertCallRow(db, other, 'completed', { extracted: JSON.stringify({ theirs: 1 }) });
    const csv = await textOf(await reads.exportCsv(ws.workspaceId, { status: 'completed', direction: 'outbound' }));
    const lines = csv.trim().split('\n');
    assert.equal(lines[0], 'id,created_at,direction,from,to,status,end_reason,duration_seconds,cost_usd,agent_id,campaign_id,extracted.alpha,extracted.nested,extracted.none,extracted.zeta');
    assert.equal(lines.length, 2);
    assert.equal(lines[1], `${a.id},${at(1).toISOString()},outbound,+15550001111,+15550002222,completed,caller_goodbye,61,0.0915,${ws.agentId},,3,"{""a"":1}",,z`);
    const both = (await textOf(await reads.exportCsv(ws.workspaceId, { agent_id: ws.agentId, created_before: at(3).toISOString() }))).trim().split('\n');
    assert.equal(both[0].endsWith('extracted.alpha,extracted.beta,extracted.nested,extracted.none,extracted.zeta'), true);
    assert.deepEqual(both.slice(1).map((l) => l.split(',')[0]), [b.id, a.id]);
    assert.equal(both[1], `${b.id},${at(2).toISOString()},inbound,+15550001111,+15550002222,failed,,0,0,${ws.agentId},,,true,,,`);
  });

  it('numbers in the filters are normalised; a call with no numbers shows empty cells', async () => {
    const ws = await seedWorkspace(db);
    const row = await insertCallRow(db, ws, 'completed', { from_number: null, to_number: '+15550100555' });
    const csv = (await textOf(await reads.exportCsv(ws.workspaceId, { to: '+1 555 010 0555' }))).trim().split('\n');
    assert.equal(csv.length, 2);
    assert.equal(csv[1].startsWith(`${row.id},${T0.toISOString()},outbound,,+15550100555,`), true);
    const campaign = await insertCampaign(db, { workspace_id: ws.workspaceId, agent_id: ws.agentId });
    const dialed = await insertCallRow(db, ws, 'completed', { from_number: '+15550100556', to_number: null, campaign_id: campaign.id });
    const fromOnly = (await textOf(await reads.exportCsv(ws.workspaceId, { from: '+1 555 010 0556' }))).trim().split('\n');
    assert.deepEqual(fromOnly.slice(1), [`${dialed.id},${T0.toISOString()},outbound,+15550100556,,completed,,0,0,${ws.agentId},${campaign.id}`]);
  });

  it('every call of the list up to EXPORT_MAX_ROWS, not one more', async () => {
    const ws = await seedWorkspace(db);
    await sql`insert into calls (id, workspace_id, agent_id, direction, from_number, to_number, status, provider, created_at, updated_at)
      select 'call_' || lpad(n::text, 26, '0'), ${ws.workspaceId}, ${ws.agentId}, 'outbound', '+15550001111', '+15550002222', 'completed', 'sandbox', ${T0}, ${T0}
      from generate_series(1, ${EXPORT_MAX_ROWS + 1}) as n`.execute(db);
    const lines = (await textOf(await reads.exportCsv(ws.workspaceId, {}))).trim().split('\n');
    assert.equal(lines.length, 1 + EXPORT_MAX_ROWS);
    assert.equal(lines[1].split(',')[0], `call_${String(EXPORT_MAX_ROWS + 1).padStart(26, '0')}`);
    assert.equal(lines.at(-1)?.split(',')[0], `call_${'2'.padStart(26, '0')}`);
  });
});

describe('presentCall', () => {
  it('the API object: times as ISO, cost in USD, signed links, content shown', async () => {
    const ws = await seedWorkspace(db);
    const row = await insertCallRow(db, ws, 'completed', {
      started_at: at(1),
      answered_at: at(2),
      ended_at: at(3),
      duration_ms: 60_000,
      billed_seconds: 60,
      cost_micros: 90_000,
      recording_key: 'rec/x',
      transcript: JSON.stringify([{ role: 'agent', text: 'Hi' }]),
    });
    const call = await reads.get(ws.workspaceId, row.id);
    assert.equal(call.started_at, at(1).toISOString());
    assert.equal(call.answered_at, at(2).toISOString());
    assert.equal(call.ended_at, at(3).toISOString());
    assert.equal(call.created_at, T0.toISOString());
    assert.equal(call.duration_ms, 60_000);
    assert.equal(call.duration_seconds, 60);
    assert.equal(call.cost_usd, 0.09);
    assert.deepEqual(call.transcript, [{ role: 'agent', text: 'Hi' }]);
    assert.equal(call.recording_url, links.sign(`/v1/calls/${row.id}/recording.mp3`));
    assert.equal(call.transcript_url, links.sign(`/v1/calls/${row.id}/transcript`));
    assert.equal(call.from, '+15550001111');
    assert.equal(call.to, '+15550002222');
    assert.equal(call.agent_id, ws.agentId);
    assert.equal(call.direction, 'outbound');
  });

  it('no recording: no recording link; a deleted call shows no transcript and no links', async () => {
    const ws = await seedWorkspace(db);
    const plain = await insertCallRow(db, ws, 'completed');
    assert.equal((await reads.get(ws.workspaceId, plain.id)).recording_url, null);
    assert.equal((await reads.get(ws.workspaceId, plain.id)).started_at, null);
    const deleted = await insertCallRow(db, ws, 'completed', { recording_key: 'rec/y', transcript: JSON.stringify([{ role: 'agent', text: 'Hi' }]), content_deleted_at: at(5) });
    const call = presentCall((await repo.get(ws.workspaceId, deleted.id)) as CallRow, links);
    assert.deepEqual(call.transcript, []);
    assert.equal(call.recording_url, null);
    assert.equal(call.transcript_url, null);
  });
});

describe('figures', () => {
  it('byStatus: the workspace\'s calls created in [from, to), per status, with answered counts; by agent when given', async () => {
    const { ws, other, agent2 } = await seedWorkspacePair(db);
    await insertCallRow(db, ws, 'completed', { created_at: at(0), duration_ms: 1000, cost_micros: 10, answered_at: at(0) });
    await insertCallRow(db, ws, 'completed', { created_at: at(5), duration_ms: 2000, cost_micros: 20 });
    await insertCallRow(db, { ...ws, agentId: agent2 }, 'failed', { created_at: at(9), duration_ms: 4000, cost_micros: 40, answered_at: at(9) });
    await insertCallRow(db, ws, 'completed', { created_at: at(10), duration_ms: 8000, cost_micros: 80 });
    await insertCallRow(db, ws, 'completed', { created_at: at(-1), duration_ms: 8000, cost_micros: 80 });
    await insertCallRow(db, other, 'completed', { created_at: at(1), duration_ms: 8000, cost_micros: 80 });
    const norm = (rows: Array<Record<string, unknown>>) =>
      rows.map((r) => ({ status: r.status, count: Number(r.count), duration: Number(r.duration), cost: Number(r.cost), answered: Number(r.answered), answered_duration: Number(r.answered_duration) })).sort((x, y) => String(x.status).localeCompare(String(y.status)));
    const range = { from: at(0), to: at(10) };
    assert.deepEqual(norm(await figures.byStatus(db, ws.workspaceId, range)), [
      { status: 'completed', count: 2, duration: 3000, cost: 30, answered: 1, answered_duration: 1000 },
      { status: 'failed', count: 1, duration: 4000, cost: 40, answered: 1, answered_duration: 4000 },
    ]);
    assert.deepEqual(norm(await figures.byStatus(db, ws.workspaceId, range, agent2)), [{ status: 'failed', count: 1, duration: 4000, cost: 40, answered: 1, answered_duration: 4000 }]);
  });

  it('byDay: per UTC day of creation, in [from, to), this workspace only', async () => {
    const ws = await seedWorkspace(db);
    const other = await seedWorkspace(db);
    const day1 = new Date('2026-11-20T23:30:00Z');
    const day2 = new Date('2026-11-21T00:30:00Z');
    await insertCallRow(db, ws, 'completed', { created_at: day1, duration_ms: 1000, cost_micros: 10 });
    await insertCallRow(db, ws, 'failed', { created_at: day1, duration_ms: 2000, cost_micros: 20 });
    await insertCallRow(db, ws, 'completed', { created_at: day2, duration_ms: 4000, cost_micros: 40 });
    await insertCallRow(db, ws, 'completed', { created_at: new Date('2026-11-22T00:00:00Z') });
    await insertCallRow(db, other, 'completed', { created_at: day1 });
    const rows = (await figures.byDay(db, ws.workspaceId, { from: day1, to: new Date('2026-11-22T00:00:00Z') }))
      .map((r) => ({ day: r.day, count: Number(r.count), duration: Number(r.duration), cost: Number(r.cost) }))
      .sort((x, y) => x.day.localeCompare(y.day));
    assert.deepEqual(rows, [
      { day: '2026-11-20', count: 2, duration: 3000, cost: 30 },
      { day: '2026-11-21', count: 1, duration: 4000, cost: 40 },
    ]);
  });

  it('spendByAgent: the charges joined to their calls, per agent: micro-USD spent, calls, billed seconds', async () => {
    const ws = await seedWorkspace(db);
    const agent2 = (await seedWorkspace(db)).agentId;
    const c1 = await insertCallRow(db, ws, 'completed', { billed_seconds: 60 });
    const c2 = await insertCallRow(db, ws, 'completed', { billed_seconds: 30 });
    const c3 = await insertCallRow(db, { ...ws, agentId: agent2 }, 'completed', { billed_seconds: 6 });
    const charge = (callId: string | null, amount: number) => ({
      id: newId('txn'),
      workspace_id: ws.workspaceId,
      type: 'call' as const,
      amount_micros: amount,
      balance_after_micros: 0,
      description: null,
      reference_id: callId,
      created_at: T0,
    });
    await db.insertInto('wallet_transactions').values([charge(c1.id, -90_000), charge(c2.id, -45_000), charge(c3.id, -9_000), charge(null, -1)]).execute();
    const charges = db.selectFrom('wallet_transactions').where('workspace_id', '=', ws.workspaceId).select(['reference_id as call_id', 'amount_micros']);
    const rows = (await figures.spendByAgent(db, charges))
      .map((r) => ({ agent: r.agent_id, micros: Number(r.micros), calls: Number(r.calls), seconds: Number(r.seconds) }))
      .sort((x, y) => y.micros - x.micros);
    assert.deepEqual(rows, [
      { agent: ws.agentId, micros: 135_000, calls: 2, seconds: 90 },
      { agent: agent2, micros: 9_000, calls: 1, seconds: 6 },
    ]);
  });

  it('durationAndCost: these calls of these workspaces only', async () => {
    const ws = await seedWorkspace(db);
    const other = await seedWorkspace(db);
    const mine = await insertCallRow(db, ws, 'completed', { duration_ms: 1234, cost_micros: 56 });
    const theirs = await insertCallRow(db, other, 'completed', { duration_ms: 1, cost_micros: 1 });
    await insertCallRow(db, ws, 'completed');
    const rows = await figures.durationAndCost(db, [ws.workspaceId], [mine.id, theirs.id]);
    assert.deepEqual(rows.map((r) => ({ id: r.id, duration_ms: r.duration_ms, cost: Number(r.cost_micros) })), [{ id: mine.id, duration_ms: 1234, cost: 56 }]);
  });
});
