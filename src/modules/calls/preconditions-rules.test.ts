import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { insertCallRow, seedWorkspace, T0 } from '../../../test/support/call-rows.ts';
import { insertPhoneNumber, refusal } from '../../../test/support/campaign-service-rig.ts';
import { testDatabase } from '../../../test/support/database.ts';
import { AppError } from '../../platform/errors.ts';
import { SANDBOX_CALLER_ID } from '../../ports/telephony.ts';
import { checkOutbound, checkOutboundMany, hasFunds, phoneField, requireCallAgent, requireFunds } from './preconditions.ts';

// What must hold before a call starts (preconditions.ts), on the real database with rows written
// directly: the number to call, the agent of the workspace, the caller id, the do-not-call list and
// the wallet, each refusal with its code and field, in their order, for one call and for a batch.

const { db } = await testDatabase();
const CARRIER = { ownsCallerIds: true };
const SANDBOX = { ownsCallerIds: false };

async function setBalance(workspaceId: string, micros: number) {
  await db.updateTable('wallets').set({ balance_micros: micros }).where('workspace_id', '=', workspaceId).execute();
}
async function listDnc(workspaceId: string, number: string) {
  await db.insertInto('dnc_numbers').values({ workspace_id: workspaceId, number, reason: null, created_at: T0 }).execute();
}
const verdictOf = (v: Awaited<ReturnType<typeof checkOutboundMany>>[number]) => (v.ok ? v : { ok: false, code: v.error.code, status: v.error.status, errors: v.error.errors });

describe('the wallet', () => {
  it('has funds above zero only: 1 micro-USD is enough, 0 and below are not', async () => {
    const ws = await seedWorkspace(db, 1);
    assert.equal(await hasFunds(db, ws.workspaceId), true);
    await requireFunds(db, ws.workspaceId);
    await setBalance(ws.workspaceId, 0);
    assert.equal(await hasFunds(db, ws.workspaceId), false);
    await setBalance(ws.workspaceId, -5);
    assert.equal(await hasFunds(db, ws.workspaceId), false);
  });

  it('a workspace with no wallet row has no funds; another workspace\'s wallet is not read', async () => {
    const rich = await seedWorkspace(db, 5_000_000);
    const poor = await seedWorkspace(db, 0);
    await db.deleteFrom('wallets').where('workspace_id', '=', poor.workspaceId).execute();
    assert.equal(await hasFunds(db, poor.workspaceId), false);
    assert.equal(await hasFunds(db, rich.workspaceId), true);
  });

  it('requireFunds refuses 402 insufficient_balance naming what was refused', async () => {
    const ws = await seedWorkspace(db, 0);
    assert.deepEqual(await refusal(requireFunds(db, ws.workspaceId)), { status: 402, code: 'insufficient_balance', detail: 'The wallet balance is zero or below: top up to place calls.' });
    assert.deepEqual(await refusal(requireFunds(db, ws.workspaceId, 'start a session')), {
      status: 402,
      code: 'insufficient_balance',
      detail: 'The wallet balance is zero or below: top up to start a session.',
    });
  });
});

describe('the agent', () => {
  it('is the workspace\'s live agent: another workspace\'s or a deleted one is 422 naming the field', async () => {
    const ws = await seedWorkspace(db);
    const other = await seedWorkspace(db);
    assert.equal((await requireCallAgent(db, ws.workspaceId, ws.agentId)).id, ws.agentId);
    const refused = await refusal(requireCallAgent(db, ws.workspaceId, other.agentId));
    assert.equal(refused.status, 422);
    assert.deepEqual(refused.errors, [{ path: 'agent_id', message: 'no such agent in this workspace' }]);
    assert.deepEqual((await refusal(requireCallAgent(db, ws.workspaceId, other.agentId, 'agent'))).errors, [{ path: 'agent', message: 'no such agent in this workspace' }]);
    await db.updateTable('agents').set({ deleted_at: T0 }).where('id', '=', ws.agentId).execute();
    assert.equal((await refusal(requireCallAgent(db, ws.workspaceId, ws.agentId))).status, 422);
  });
});

describe('phoneField', () => {
  it('answers E.164 (spaces and dashes dropped), else 422 naming the field', () => {
    assert.equal(phoneField(' +1 555-010-0200 ', 'to'), '+15550100200');
    try {
      phoneField('12', 'from');
      assert.fail('expected a refusal');
    } catch (error) {
      assert.ok(error instanceof AppError);
      assert.equal(error.status, 422);
      assert.deepEqual(error.errors, [{ path: 'from', message: 'must be a possible phone number (E.164, e.g. +15550100200)' }]);
    }
  });
});

describe('checkOutbound: one call', () => {
  it('sandbox: the number normalised, the sandbox caller id when none is given, a given one kept', async () => {
    const ws = await seedWorkspace(db);
    assert.deepEqual(await checkOutbound(db, ws.workspaceId, { agent_id: ws.agentId, to: '+1 555 010 0200' }, SANDBOX), { to: '+15550100200', from: SANDBOX_CALLER_ID });
    assert.deepEqual(await checkOutbound(db, ws.workspaceId, { agent_id: ws.agentId, to: '+15550100200', from: '+1 555 010 0300' }, SANDBOX), { to: '+15550100200', from: '+15550100300' });
  });

  it('refuses a number that is not a phone number: 422 on to, before the agent is looked at', async () => {
    const ws = await seedWorkspace(db);
    const refused = await refusal(checkOutbound(db, ws.workspaceId, { agent_id: 'agent_none', to: 'abc' }, SANDBOX));
    assert.deepEqual(refused.errors, [{ path: 'to', message: 'must be a possible phone number (E.164, e.g. +15550100200)' }]);
  });

  it('refuses an agent of another workspace, or deleted: 422 on agent_id', async () => {
    const ws = await seedWorkspace(db);
    const other = await seedWorkspace(db);
    const refused = await refusal(checkOutbound(db, ws.workspaceId, { agent_id: other.agentId, to: '+15550100200' }, SANDBOX));
    assert.deepEqual(refused.errors, [{ path: 'agent_id', message: 'no such agent in this workspace' }]);
    await db.updateTable('agents').set({ deleted_at: T0 }).where('id', '=', ws.agentId).execute();
    assert.deepEqual((await refusal(checkOutbound(db, ws.workspaceId, { agent_id: ws.agentId, to: '+15550100200' }, SANDBOX))).errors, refused.errors);
  });

  it('refuses a caller id that is not a phone number: 422 on from', async () => {
    const ws = await seedWorkspace(db);
    const refused = await refusal(checkOutbound(db, ws.workspaceId, { agent_id: ws.agentId, to: '+15550100200', from: 'nope' }, SANDBOX));
    assert.deepEqual(refused.errors, [{ path: 'from', message: 'must be a possible phone number (E.164, e.g. +15550100200)' }]);
  });

  it('carrier: the caller id must be a number of this workspace; none given is no_caller_id', async () => {
    const ws = await seedWorkspace(db);
    const other = await seedWorkspace(db);
    await insertPhoneNumber(db, ws.workspaceId, '+15550107001');
    await insertPhoneNumber(db, other.workspaceId, '+15550107002');
    const input = { agent_id: ws.agentId, to: '+15550100200' };
    assert.deepEqual(await checkOutbound(db, ws.workspaceId, { ...input, from: '+1 555 010 7001' }, CARRIER), { to: '+15550100200', from: '+15550107001' });
    const foreign = await refusal(checkOutbound(db, ws.workspaceId, { ...input, from: '+15550107002' }, CARRIER));
    assert.deepEqual(foreign, { status: 422, code: 'no_caller_id', detail: "from is not one of this workspace's phone numbers." });
    const unknown = await refusal(checkOutbound(db, ws.workspaceId, { ...input, from: '+15550107003' }, CARRIER));
    assert.equal(unknown.code, 'no_caller_id');
    const none = await refusal(checkOutbound(db, ws.workspaceId, { ...input, from: null }, CARRIER));
    assert.deepEqual(none, { status: 422, code: 'no_caller_id', detail: "No caller id: pass from, one of the workspace's phone numbers." });
    // The sandbox provides its caller ids: any possible number passes.
    assert.deepEqual(await checkOutbound(db, ws.workspaceId, { ...input, from: '+15550107002' }, SANDBOX), { to: '+15550100200', from: '+15550107002' });
  });

  it('refuses a number on the workspace\'s do-not-call list (409 do_not_call); another workspace\'s list does not count', async () => {
    const ws = await seedWorkspace(db);
    const other = await seedWorkspace(db);
    await listDnc(ws.workspaceId, '+15550100201');
    await listDnc(other.workspaceId, '+15550100202');
    const refused = await refusal(checkOutbound(db, ws.workspaceId, { agent_id: ws.agentId, to: '+1 555 010 0201' }, SANDBOX));
    assert.deepEqual(refused, { status: 422, code: 'do_not_call', detail: "+15550100201 is on the workspace's do-not-call list." });
    assert.deepEqual(await checkOutbound(db, ws.workspaceId, { agent_id: ws.agentId, to: '+15550100202' }, SANDBOX), { to: '+15550100202', from: SANDBOX_CALLER_ID });
  });

  it('refuses at zero balance (402), unless funds: false; a balance of 1 passes', async () => {
    const ws = await seedWorkspace(db, 0);
    const input = { agent_id: ws.agentId, to: '+15550100200' };
    assert.deepEqual(await refusal(checkOutbound(db, ws.workspaceId, input, SANDBOX)), {
      status: 402,
      code: 'insufficient_balance',
      detail: 'The wallet balance is zero or below: top up to place calls.',
    });
    assert.deepEqual(await checkOutbound(db, ws.workspaceId, input, { ...SANDBOX, funds: false }), { to: '+15550100200', from: SANDBOX_CALLER_ID });
    await setBalance(ws.workspaceId, 1);
    assert.deepEqual(await checkOutbound(db, ws.workspaceId, input, { ...SANDBOX, funds: true }), { to: '+15550100200', from: SANDBOX_CALLER_ID });
  });

  it('checks in order: the number, the agent, the caller id, the do-not-call list, the wallet', async () => {
    const ws = await seedWorkspace(db, 0);
    await listDnc(ws.workspaceId, '+15550100203');
    const codeOf = async (input: { agent_id: string; to: string; from?: string }, options = CARRIER) => {
      const r = await refusal(checkOutbound(db, ws.workspaceId, input, options));
      return r.errors ? r.errors[0].path : r.code;
    };
    assert.equal(await codeOf({ agent_id: 'agent_none', to: 'x', from: 'y' }), 'to');
    assert.equal(await codeOf({ agent_id: 'agent_none', to: '+15550100203', from: 'y' }), 'agent_id');
    assert.equal(await codeOf({ agent_id: ws.agentId, to: '+15550100203', from: 'y' }), 'from');
    assert.equal(await codeOf({ agent_id: ws.agentId, to: '+15550100203', from: '+15550107009' }), 'no_caller_id');
    assert.equal(await codeOf({ agent_id: ws.agentId, to: '+15550100203' }, SANDBOX), 'do_not_call');
    assert.equal(await codeOf({ agent_id: ws.agentId, to: '+15550100204' }, SANDBOX), 'insufficient_balance');
  });
});

describe('checkOutboundMany: a batch', () => {
  it('answers nothing for nothing', async () => {
    assert.deepEqual(await checkOutboundMany(db, [], SANDBOX), []);
  });

  it('one verdict per input, in order, each read against its own workspace', async () => {
    const a = await seedWorkspace(db);
    const b = await seedWorkspace(db, 0);
    const c = await seedWorkspace(db);
    await listDnc(a.workspaceId, '+15550100301');
    await insertPhoneNumber(db, c.workspaceId, '+15550107101');
    const verdicts = await checkOutboundMany(
      db,
      [
        { workspaceId: a.workspaceId, agent_id: a.agentId, to: '+15550100301', from: '+15550107101' },
        { workspaceId: c.workspaceId, agent_id: c.agentId, to: '+15550100301', from: '+15550107101' },
        { workspaceId: b.workspaceId, agent_id: b.agentId, to: '+15550100302', from: '+15550107101' },
        { workspaceId: a.workspaceId, agent_id: c.agentId, to: '+15550100302', from: '+15550107101' },
        { workspaceId: c.workspaceId, agent_id: c.agentId, to: '+15550100302', from: '+15550107101' },
      ],
      CARRIER,
    );
    assert.deepEqual(verdicts.map(verdictOf), [
      { ok: false, code: 'no_caller_id', status: 422, errors: undefined },
      { ok: true, to: '+15550100301', from: '+15550107101' },
      { ok: false, code: 'no_caller_id', status: 422, errors: undefined },
      { ok: false, code: 'validation_failed', status: 422, errors: [{ path: 'agent_id', message: 'no such agent in this workspace' }] },
      { ok: true, to: '+15550100302', from: '+15550107101' },
    ]);
  });

  it('the wallet of each workspace: one funded, one not; funds: false reads none', async () => {
    const rich = await seedWorkspace(db);
    const poor = await seedWorkspace(db, 0);
    const inputs = [
      { workspaceId: poor.workspaceId, agent_id: poor.agentId, to: '+15550100401' },
      { workspaceId: rich.workspaceId, agent_id: rich.agentId, to: '+15550100401' },
    ];
    assert.deepEqual((await checkOutboundMany(db, inputs, SANDBOX)).map(verdictOf), [
      { ok: false, code: 'insufficient_balance', status: 402, errors: undefined },
      { ok: true, to: '+15550100401', from: SANDBOX_CALLER_ID },
    ]);
    assert.deepEqual(
      (await checkOutboundMany(db, inputs, { ...SANDBOX, funds: false })).map((v) => v.ok),
      [true, true],
    );
  });

  it('every number invalid: no list is read, each refused on to', async () => {
    const ws = await seedWorkspace(db);
    const verdicts = await checkOutboundMany(db, [{ workspaceId: ws.workspaceId, agent_id: ws.agentId, to: 'x' }], SANDBOX);
    assert.deepEqual(verdicts.map(verdictOf), [{ ok: false, code: 'validation_failed', status: 422, errors: [{ path: 'to', message: 'must be a possible phone number (E.164, e.g. +15550100200)' }] }]);
  });

  it('a live call row does not matter to the checks', async () => {
    const ws = await seedWorkspace(db);
    await insertCallRow(db, ws, 'in_progress', { to_number: '+15550100501' });
    assert.deepEqual(await checkOutbound(db, ws.workspaceId, { agent_id: ws.agentId, to: '+15550100501' }, SANDBOX), { to: '+15550100501', from: SANDBOX_CALLER_ID });
  });
});
