import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp, type TestUser } from '../../../test/support/fixtures.ts';
import { securitySuite } from '../../../test/support/security.ts';
import { as, createCallAgent, placeCall, waitForEnd } from '../calls/test-helpers.ts';

// Phone numbers on the sandbox provider: search, buy (first month debited), import, assign,
// release (refused while a call on the number is live), and inbound calls to an assigned number.

const t = await buildTestApp({ env: { SANDBOX_SPEED: '50' } });

async function buy(user: TestUser, body: Record<string, unknown>) {
  return t.request({ method: 'POST', url: '/v1/phone-numbers/buy', ...as(user), payload: body });
}

async function available(user: TestUser, query = '') {
  const res = await t.request({ method: 'GET', url: `/v1/phone-numbers/available${query}`, ...as(user) });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data as Array<{ number: string; country: string; monthly_cost_usd: number }>;
}

async function balance(user: TestUser) {
  const row = await t.platform.db.selectFrom('wallets').select('balance_micros').where('workspace_id', '=', user.workspaceId).executeTakeFirstOrThrow();
  return Number(row.balance_micros);
}

describe('phone numbers', () => {
  it('searches the inventory by area code and digits, and hides numbers already taken', async () => {
    const user = await signUp(t);
    const some = await available(user, '?country=US&area_code=555&limit=5');
    assert.equal(some.length, 5);
    for (const n of some) assert.match(n.number, /^\+1555\d{7}$/);
    assert.equal(some[0].monthly_cost_usd, 1.15);
    const containing = await available(user, '?contains=0145');
    assert.ok(containing.length > 0 && containing.every((n) => n.number.includes('0145')));
    assert.deepEqual(await available(user, '?area_code=212'), []);
    assert.deepEqual(await available(user, '?country=DE'), []);
    const bought = await buy(user, { number: some[0].number });
    assert.equal(bought.statusCode, 201, bought.body);
    const other = await signUp(t);
    assert.ok(!(await available(other, '?limit=5')).some((n) => n.number === some[0].number));
    const taken = await buy(other, { number: some[0].number });
    assert.equal(taken.statusCode, 409);
    assert.equal((await t.request({ method: 'GET', url: '/v1/phone-numbers/available?limit=0', ...as(user) })).statusCode, 422);
  });

  it('goes on past the numbers already taken: the sandbox does not run dry after its first numbers are bought', async () => {
    const user = await signUp(t);
    // Top the wallet up so it can pay for every number.
    await t.platform.db.updateTable('wallets').set({ balance_micros: 1_000_000_000 }).where('workspace_id', '=', user.workspaceId).execute();
    const first = await available(user, '?contains=0148&limit=10');
    for (const n of first) assert.equal((await buy(user, { number: n.number })).statusCode, 201);
    // Ten more taken than one search round looks at (limit 3 → 9 numbers): the next three free ones still come back.
    const next = await available(user, '?contains=0148&limit=3');
    assert.equal(next.length, 3);
    assert.ok(next.every((n) => !first.some((f) => f.number === n.number)), 'none of them taken');
    assert.ok(next.every((n) => n.number.includes('0148')));
  });

  it('buying debits the first month in one ledger row; too little balance buys nothing (402)', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    const [choice] = await available(user, '?contains=0147');
    const before = await balance(user);
    const res = await buy(user, { number: choice.number.replace('+1', '+1 '), label: 'Support line', agent_id: agent.id });
    assert.equal(res.statusCode, 201, res.body);
    const number = res.json();
    assert.match(number.id, /^pn_/);
    assert.equal(number.number, choice.number);
    assert.deepEqual({ country: number.country, provider: number.provider, label: number.label, agent_id: number.agent_id }, { country: 'US', provider: 'sandbox', label: 'Support line', agent_id: agent.id });
    assert.deepEqual(number.capabilities, { voice: true, sms: true });
    assert.equal(await balance(user), before - 1_150_000);
    const ledger = await t.platform.db.selectFrom('wallet_transactions').selectAll().where('reference_id', '=', number.id).execute();
    assert.deepEqual(ledger.map((r) => [r.type, Number(r.amount_micros)]), [['phone_number', -1_150_000]]);

    await t.platform.db.updateTable('wallets').set({ balance_micros: 1_000_000 }).where('workspace_id', '=', user.workspaceId).execute();
    const [next] = await available(user, '?contains=0148');
    const poor = await buy(user, { number: next.number });
    assert.equal(poor.statusCode, 402);
    assert.equal(poor.json().code, 'insufficient_balance');
    assert.equal(await balance(user), 1_000_000);
    assert.equal((await t.request({ method: 'GET', url: '/v1/phone-numbers', ...as(user) })).json().data.length, 1);
    const notForSale = await buy(user, { number: '+14155550100' });
    assert.equal(notForSale.statusCode, 422);
    const foreignAgent = await buy(await signUp(t), { number: next.number, agent_id: agent.id });
    assert.equal(foreignAgent.statusCode, 422);
    assert.equal(foreignAgent.json().errors[0].path, 'agent_id');
  });

  it('imports without a charge; patches, assigns and unassigns; lists by agent; releases (then 404)', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    const before = await balance(user);
    const imported = await t.request({ method: 'POST', url: '/v1/phone-numbers/import', ...as(user), payload: { number: '+1 555 019 1234' } });
    assert.equal(imported.statusCode, 201, imported.body);
    const id = imported.json().id;
    assert.equal(imported.json().monthly_cost_usd, 0);
    assert.equal(await balance(user), before);
    const again = await t.request({ method: 'POST', url: '/v1/phone-numbers/import', ...as(user), payload: { number: '+15550191234' } });
    assert.equal(again.statusCode, 409);
    const assigned = await t.request({ method: 'POST', url: `/v1/phone-numbers/${id}/assign`, ...as(user), payload: { agent_id: agent.id } });
    assert.equal(assigned.json().agent_id, agent.id);
    const byAgent = await t.request({ method: 'GET', url: `/v1/phone-numbers?agent_id=${agent.id}`, ...as(user) });
    assert.deepEqual(byAgent.json().data.map((n: { id: string }) => n.id), [id]);
    const labelled = await t.request({ method: 'PATCH', url: `/v1/phone-numbers/${id}`, ...as(user), payload: { label: 'Front desk' } });
    assert.equal(labelled.json().label, 'Front desk');
    assert.equal(labelled.json().agent_id, agent.id);
    const unassigned = await t.request({ method: 'POST', url: `/v1/phone-numbers/${id}/unassign`, ...as(user) });
    assert.equal(unassigned.json().agent_id, null);
    assert.equal((await t.request({ method: 'GET', url: `/v1/phone-numbers/${id}`, ...as(user) })).json().label, 'Front desk');
    assert.equal((await t.request({ method: 'DELETE', url: `/v1/phone-numbers/${id}`, ...as(user) })).statusCode, 204);
    assert.equal((await t.request({ method: 'GET', url: `/v1/phone-numbers/${id}`, ...as(user) })).statusCode, 404);
    assert.equal((await t.request({ method: 'DELETE', url: `/v1/phone-numbers/${id}`, ...as(user) })).statusCode, 404);
  });

  it('an inbound call to an assigned number starts its agent; the number cannot be released while the call is live', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user, { silence_timeout_seconds: 600 });
    const [choice] = await available(user, '?contains=0149');
    const number = (await buy(user, { number: choice.number, agent_id: agent.id })).json();
    const inbound = await t.request({ method: 'POST', url: '/v1/sandbox/inbound-call', ...as(user), payload: { to: number.number, from: '+15550177001', simulation: { caller_script: [] } } });
    assert.equal(inbound.statusCode, 201, inbound.body);
    const refused = await t.request({ method: 'DELETE', url: `/v1/phone-numbers/${number.id}`, ...as(user) });
    assert.equal(refused.statusCode, 409);
    assert.equal(refused.json().code, 'invalid_state');
    const hangup = await t.request({ method: 'POST', url: `/v1/calls/${inbound.json().id}/hangup`, ...as(user) });
    assert.equal(hangup.statusCode, 200, hangup.body);
    const ended = await waitForEnd(t, user, inbound.json().id);
    assert.equal(ended.agent_id, agent.id);
    assert.equal(ended.end_reason, 'api_hangup');
    assert.equal((await t.request({ method: 'DELETE', url: `/v1/phone-numbers/${number.id}`, ...as(user) })).statusCode, 204);
    const gone = await t.request({ method: 'POST', url: '/v1/sandbox/inbound-call', ...as(user), payload: { to: number.number, from: '+15550177001' } });
    assert.equal(gone.statusCode, 422);
  });

  it('outbound calls may use a bought number as caller id', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    const [choice] = await available(user, '?contains=0146');
    const number = (await buy(user, { number: choice.number })).json();
    const call = await waitForEnd(t, user, (await placeCall(t, user, { agent_id: agent.id, to: '+15550100101', from: number.number })).id);
    assert.equal(call.from, number.number);
  });
});

/** Numbers for the security suite's tenants: one each, never the same twice (a number is unique across workspaces). */
let nextOwnNumber = 0;
async function ownNumber(app: typeof t, owner: TestUser): Promise<string> {
  const number = `+1555018${String(nextOwnNumber++ % 1e4).padStart(4, '0')}`;
  const res = await app.request({ method: 'POST', url: '/v1/phone-numbers/import', ...as(owner), payload: { number } });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().id;
}

securitySuite('phone numbers', async () => t, {
  'GET /v1/phone-numbers': { scope: 'read-only', prepare: async () => ({ method: 'GET', url: '/v1/phone-numbers' }) },
  'GET /v1/phone-numbers/available': { scope: 'read-only', prepare: async () => ({ method: 'GET', url: '/v1/phone-numbers/available' }) },
  'POST /v1/phone-numbers/buy': { scope: 'write', prepare: async () => ({ method: 'POST', url: '/v1/phone-numbers/buy', payload: { number: '+15550142000' } }) },
  'POST /v1/phone-numbers/import': { scope: 'write', prepare: async () => ({ method: 'POST', url: '/v1/phone-numbers/import', payload: { number: '+15550170000' } }) },
  'GET /v1/phone-numbers/{id}': { scope: 'read-only', ownedResource: true, prepare: async (app, owner) => ({ method: 'GET', url: `/v1/phone-numbers/${await ownNumber(app, owner)}` }) },
  'PATCH /v1/phone-numbers/{id}': { scope: 'write', ownedResource: true, prepare: async (app, owner) => ({ method: 'PATCH', url: `/v1/phone-numbers/${await ownNumber(app, owner)}`, payload: { label: 'x' } }) },
  'DELETE /v1/phone-numbers/{id}': { scope: 'write', ownedResource: true, prepare: async (app, owner) => ({ method: 'DELETE', url: `/v1/phone-numbers/${await ownNumber(app, owner)}` }) },
  'POST /v1/phone-numbers/{id}/assign': {
    scope: 'write',
    ownedResource: true,
    prepare: async (app, owner) => ({ method: 'POST', url: `/v1/phone-numbers/${await ownNumber(app, owner)}/assign`, payload: { agent_id: (await createCallAgent(app, owner)).id } }),
  },
  'POST /v1/phone-numbers/{id}/unassign': { scope: 'write', ownedResource: true, prepare: async (app, owner) => ({ method: 'POST', url: `/v1/phone-numbers/${await ownNumber(app, owner)}/unassign` }) },
});
