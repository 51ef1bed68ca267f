import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { callOf, historyOf, ms, seedWorkspace } from '../../../test/support/call-rows.ts';
import { insertPhoneNumber, refusal } from '../../../test/support/campaign-service-rig.ts';
import { callsServiceRig, LEASE_MS } from '../../../test/support/calls-service-rig.ts';
import { SANDBOX_CALLER_ID } from '../../ports/telephony.ts';

// The calls service's rules (service.ts) on the real database and journal, rows written directly:
// an outbound call queued (and the dialer woken) only when its checks pass, with every field
// written; the sandbox's inbound call admitted only to a number of the workspace with an agent,
// rung at once and handed to the runner. service-control-rules.test.ts holds hang up, transfer,
// extraction re-run and the live count.

const { db, clock, service, carrier, log, nudges } = await callsServiceRig();
const TRACE = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

describe('placeOutbound', () => {
  it('queues the call with every field, its history, the trace, and wakes the dialer once', async () => {
    const ws = await seedWorkspace(db);
    const before = nudges();
    const body = { agent_id: ws.agentId, to: '+1 555 010 0200', variables: { name: 'Ada' }, metadata: { crm: 7 }, simulation: { persona: 'busy' } } as never;
    const row = await service.placeOutbound(ws.workspaceId, body, TRACE);
    assert.equal(nudges(), before + 1);
    const stored = await callOf(db, row.id);
    assert.deepEqual(stored, row);
    assert.match(row.id, /^call_[0-9a-z]{26}$/);
    assert.equal(row.workspace_id, ws.workspaceId);
    assert.equal(row.agent_id, ws.agentId);
    assert.equal(row.status, 'queued');
    assert.equal(row.direction, 'outbound');
    assert.equal(row.to_number, '+15550100200');
    assert.equal(row.from_number, SANDBOX_CALLER_ID);
    assert.equal(row.provider, 'sandbox');
    assert.deepEqual(row.variables, { name: 'Ada' });
    assert.deepEqual(row.metadata, { crm: 7 });
    assert.deepEqual(row.simulation, { persona: 'busy' });
    assert.equal(row.trace_parent, TRACE);
    assert.deepEqual(await historyOf(db, row.id), [[1, 'queued', clock.now().getTime()]]);
  });

  it('without variables, metadata or simulation: empty objects and null', async () => {
    const ws = await seedWorkspace(db);
    const row = await service.placeOutbound(ws.workspaceId, { agent_id: ws.agentId, to: '+15550100200' } as never);
    assert.deepEqual(row.variables, {});
    assert.deepEqual(row.metadata, {});
    assert.equal(row.simulation, null);
    assert.equal(row.trace_parent, null);
  });

  it('a carrier: the workspace\'s number as caller id, its provider; none given is refused', async () => {
    const ws = await seedWorkspace(db);
    await insertPhoneNumber(db, ws.workspaceId, '+15550107201');
    const row = await carrier.placeOutbound(ws.workspaceId, { agent_id: ws.agentId, to: '+15550100200', from: '+15550107201' } as never);
    assert.equal(row.from_number, '+15550107201');
    assert.equal(row.provider, 'twilio');
    assert.equal((await refusal(carrier.placeOutbound(ws.workspaceId, { agent_id: ws.agentId, to: '+15550100200' } as never))).code, 'no_caller_id');
  });

  it('refused (no funds, another workspace\'s agent): no row, the dialer not woken', async () => {
    const poor = await seedWorkspace(db, 0);
    const other = await seedWorkspace(db);
    const before = nudges();
    assert.equal((await refusal(service.placeOutbound(poor.workspaceId, { agent_id: poor.agentId, to: '+15550100200' } as never))).code, 'insufficient_balance');
    assert.equal((await refusal(service.placeOutbound(poor.workspaceId, { agent_id: other.agentId, to: '+15550100200' } as never))).status, 422);
    assert.equal(nudges(), before);
    assert.equal((await db.selectFrom('calls').select('id').where('workspace_id', '=', poor.workspaceId).execute()).length, 0);
  });
});

describe('receiveSandboxCall', () => {
  async function numbered(agent: boolean) {
    const ws = await seedWorkspace(db);
    const number = `+1555011${String(Math.floor(Math.random() * 10_000)).padStart(4, '0')}`;
    await insertPhoneNumber(db, ws.workspaceId, number);
    if (agent) await db.updateTable('phone_numbers').set({ agent_id: ws.agentId }).where('number', '=', number).execute();
    return { ...ws, number };
  }

  it('rings the call at once for this runner, leased, and hands it to the runner with its media', async () => {
    const ws = await numbered(true);
    const row = await service.receiveSandboxCall(ws.workspaceId, { to: ws.number, from: '+1 555 010 0900', simulation: { persona: 'kind' } } as never, TRACE);
    assert.equal(row.status, 'ringing');
    assert.equal(row.direction, 'inbound');
    assert.equal(row.workspace_id, ws.workspaceId);
    assert.equal(row.agent_id, ws.agentId);
    assert.equal(row.from_number, '+15550100900');
    assert.equal(row.to_number, ws.number);
    assert.equal(row.provider, 'sandbox');
    assert.equal(row.lease_holder, 'rig-holder');
    assert.equal(ms(row.lease_expires_at), clock.now().getTime() + LEASE_MS);
    assert.deepEqual(row.simulation, { persona: 'kind' });
    assert.equal(row.trace_parent, TRACE);
    assert.deepEqual(await callOf(db, row.id), row);
    const handed = log.answered.at(-1);
    assert.deepEqual(handed?.row, row);
    assert.ok(handed?.media);
    assert.match(row.id, /^call_[0-9a-z]{26}$/);
    assert.deepEqual(log.inbound.at(-1), { callId: row.id, from: '+15550100900', to: ws.number, simulation: { persona: 'kind' }, realTime: false });
    assert.deepEqual((await historyOf(db, row.id)).map((h) => h[1]), ['queued', 'ringing']);
    await handed?.media.hangup();
  });

  it("a speech-to-speech agent's call is answered in real time; a cascade agent's, on the sandbox's own clock", async () => {
    const ws = await numbered(true);
    await db.updateTable('agents').set({ llm: JSON.stringify({ provider: 'openai-realtime', model: 'gpt-realtime' }) }).where('id', '=', ws.agentId).execute();
    const row = await service.receiveSandboxCall(ws.workspaceId, { to: ws.number, from: '+15550100901' } as never);
    assert.deepEqual(log.inbound.at(-1), { callId: row.id, from: '+15550100901', to: ws.number, simulation: null, realTime: true });
    await log.answered.at(-1)?.media.hangup();
  });

  it('refuses a number whose agent was deleted as an unassigned one (422 on to): no call rung, none handed on', async () => {
    const ws = await numbered(true);
    await db.updateTable('agents').set({ deleted_at: clock.now() }).where('id', '=', ws.agentId).execute();
    const [inbound, answered] = [log.inbound.length, log.answered.length];
    const refused = await refusal(service.receiveSandboxCall(ws.workspaceId, { to: ws.number, from: '+15550100902' } as never));
    assert.deepEqual(refused.errors, [{ path: 'to', message: 'the number is not assigned to an agent' }]);
    assert.deepEqual([log.inbound.length, log.answered.length], [inbound, answered]);
    assert.equal((await db.selectFrom('calls').select('id').where('workspace_id', '=', ws.workspaceId).execute()).length, 0);
  });

  it('refuses a number of another workspace, an unknown one, one with no agent (422 on to)', async () => {
    const ws = await numbered(true);
    const other = await numbered(true);
    const bare = await numbered(false);
    const from = '+15550100900';
    const errorsOf = async (workspaceId: string, to: string) => (await refusal(service.receiveSandboxCall(workspaceId, { to, from } as never))).errors;
    assert.deepEqual(await errorsOf(ws.workspaceId, other.number), [{ path: 'to', message: 'not a phone number of this workspace' }]);
    assert.deepEqual(await errorsOf(ws.workspaceId, '+15550119999'), [{ path: 'to', message: 'not a phone number of this workspace' }]);
    assert.deepEqual(await errorsOf(bare.workspaceId, bare.number), [{ path: 'to', message: 'the number is not assigned to an agent' }]);
    assert.deepEqual(await errorsOf(ws.workspaceId, 'nope'), [{ path: 'to', message: 'must be a possible phone number (E.164, e.g. +15550100200)' }]);
    assert.deepEqual((await refusal(service.receiveSandboxCall(ws.workspaceId, { to: ws.number, from: 'x' } as never))).errors, [
      { path: 'from', message: 'must be a possible phone number (E.164, e.g. +15550100200)' },
    ]);
    assert.equal((await db.selectFrom('calls').select('id').where('workspace_id', 'in', [ws.workspaceId, bare.workspaceId]).execute()).length, 0);
  });

  it('a carrier\'s telephony places no inbound call (409)', async () => {
    const ws = await numbered(true);
    assert.deepEqual(await refusal(carrier.receiveSandboxCall(ws.workspaceId, { to: ws.number, from: '+15550100900' } as never)), {
      status: 409,
      code: 'invalid_state',
      detail: 'Inbound sandbox calls need TELEPHONY_PROVIDER=sandbox.',
    });
  });
});
