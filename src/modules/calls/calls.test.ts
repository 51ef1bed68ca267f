import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { parse } from 'csv-parse/sync';
import { Webhook } from 'standardwebhooks';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp } from '../../../test/support/fixtures.ts';
import { decodedMs } from '../../../test/support/recordings.ts';
import { securitySuite } from '../../../test/support/security.ts';
import { newId } from '../../platform/ids.ts';
import { startReceiver } from '../webhooks/test-receiver.ts';
import { as, assignSandboxNumber, createCallAgent, insertEndedCall, placeCall, waitForEnd } from './test-helpers.ts';

// Sandbox calls end to end over HTTP: every magic number, the state history, transcript,
// recording (a real MP3 decoded back), cost and the ledger row, and the events both listings
// send to the agent's webhook, signed. Simulated time runs 50× faster (SANDBOX_SPEED).

const t = await buildTestApp({ env: { SANDBOX_SPEED: '50' } });
const receiver = await startReceiver();
after(() => receiver.close());

describe('sandbox calls', () => {
  it('a default call: greeting, a short conversation ending on goodbye, recording, transcript, cost and ledger row', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user, { extraction_fields: [{ name: 'topic', type: 'string', description: 'what the caller asked about' }] });
    const queued = await placeCall(t, user, { agent_id: agent.id, to: '+1 555 010 0200', variables: { customer: 'Sam' }, metadata: { ref: 42 } });
    assert.equal(queued.status, 'queued');
    const call = await waitForEnd(t, user, queued.id);
    assert.equal(call.status, 'completed');
    assert.equal(call.end_reason, 'caller_goodbye');
    assert.equal(call.direction, 'outbound');
    assert.equal(call.to, '+15550100200');
    assert.equal(call.from, '+15550100001', 'the sandbox provides a caller id');
    assert.deepEqual(call.variables, { customer: 'Sam' });
    assert.deepEqual(call.metadata, { ref: 42 });
    assert.deepEqual(call.transcript.map((e: { role: string }) => e.role), ['agent', 'user', 'agent', 'user', 'agent']);
    assert.equal(call.transcript[0].text, 'Hello, this is Ada from the bistro. How can I help?');
    assert.ok(call.answered_at && call.started_at && call.ended_at);
    assert.equal(call.latency.turns, 2);
    assert.ok(call.latency.p50_ms <= call.latency.p95_ms);
    assert.equal(typeof call.transcript[2].latency_ms, 'number');
    assert.ok(Object.hasOwn(call.extracted, 'topic'));

    // Billing: started seconds at the call rate, one ledger row.
    assert.equal(call.duration_seconds, Math.ceil(call.duration_ms / 1000));
    assert.equal(call.cost_usd, Math.round((call.duration_seconds * 0.09 * 1e6) / 60) / 1e6);
    const ledger = await t.platform.db.selectFrom('wallet_transactions').selectAll().where('reference_id', '=', call.id).execute();
    assert.equal(ledger.length, 1);
    assert.equal(ledger[0].type, 'call');
    assert.equal(Number(ledger[0].amount_micros), -Math.round(call.cost_usd * 1e6));

    const events = await t.request({ method: 'GET', url: `/v1/calls/${call.id}/events`, ...as(user) });
    assert.deepEqual(events.json().data.map((e: { status: string }) => e.status), ['queued', 'ringing', 'in_progress', 'completed']);

    // The recording is a real MP3 of the call's length (± 10 %), served whole and by range.
    const recording = await t.request({ method: 'GET', url: `/v1/calls/${call.id}/recording.mp3`, ...as(user) });
    assert.equal(recording.statusCode, 200);
    assert.equal(recording.headers['content-type'], 'audio/mpeg');
    assert.equal(recording.headers['accept-ranges'], 'bytes');
    const seconds = (await decodedMs(recording.rawPayload)) / 1000;
    assert.ok(Math.abs(seconds - call.duration_ms / 1000) <= (call.duration_ms / 1000) * 0.1, `recording ${seconds} s, call ${call.duration_ms} ms`);
    const part = await t.request({ method: 'GET', url: `/v1/calls/${call.id}/recording`, headers: { range: 'bytes=0-99' }, ...as(user) });
    assert.equal(part.statusCode, 206);
    assert.equal(part.rawPayload.length, 100);
    assert.equal(part.headers['content-range'], `bytes 0-99/${recording.rawPayload.length}`);
    assert.deepEqual(part.rawPayload, recording.rawPayload.subarray(0, 100));
    const beyond = await t.request({ method: 'GET', url: `/v1/calls/${call.id}/recording`, headers: { range: `bytes=${recording.rawPayload.length}-` }, ...as(user) });
    assert.equal(beyond.statusCode, 416);

    // Signed links work without credentials; tampered or without a signature they do not.
    const signed = new URL(call.recording_url);
    assert.equal(signed.origin, 'http://localhost:3000');
    const bySignature = await t.app.inject({ method: 'GET', url: `${signed.pathname}${signed.search}` });
    assert.equal(bySignature.statusCode, 200);
    assert.deepEqual(bySignature.rawPayload, recording.rawPayload);
    const tampered = await t.app.inject({ method: 'GET', url: `${signed.pathname}${signed.search.replace(/signature=(.)/, (_, c: string) => `signature=${c === '0' ? '1' : '0'}`)}` });
    assert.equal(tampered.statusCode, 401);
    const expired = new URL(call.transcript_url);
    expired.searchParams.set('expires', '1000');
    assert.equal((await t.app.inject({ method: 'GET', url: `${expired.pathname}${expired.search}` })).statusCode, 401);
    const unsigned = await t.app.inject({ method: 'GET', url: signed.pathname });
    assert.equal(unsigned.statusCode, 401);

    const transcriptUrl = new URL(call.transcript_url);
    const json = await t.app.inject({ method: 'GET', url: `${transcriptUrl.pathname}${transcriptUrl.search}` });
    assert.equal(json.statusCode, 200);
    assert.deepEqual(json.json().transcript, call.transcript);
    const text = await t.request({ method: 'GET', url: `/v1/calls/${call.id}/transcript`, headers: { accept: 'text/plain' }, ...as(user) });
    assert.match(String(text.headers['content-type']), /^text\/plain/);
    assert.equal(text.body.split('\n')[0], 'agent: Hello, this is Ada from the bistro. How can I help?');
    assert.equal(text.body.split('\n').length, 5);
  });

  const outcomes = [
    { to: '+15550100101', status: 'busy', end_reason: 'busy', history: ['queued', 'ringing', 'busy'] },
    { to: '+15550100102', status: 'no_answer', end_reason: 'no_answer', history: ['queued', 'ringing', 'no_answer'] },
    { to: '+15550100103', status: 'failed', end_reason: 'failed_to_connect', history: ['queued', 'ringing', 'failed'] },
    { to: '+15550100104', status: 'transferred', end_reason: 'transferred', history: ['queued', 'ringing', 'in_progress', 'transferred'] },
    { to: '+15550100105', status: 'voicemail', end_reason: 'voicemail', history: ['queued', 'ringing', 'in_progress', 'voicemail'] },
    { to: '+15550100106', status: 'completed', end_reason: 'customer_hangup', history: ['queued', 'ringing', 'in_progress', 'completed'] },
    { to: '+15550100107', status: 'failed', end_reason: 'media_error', history: ['queued', 'ringing', 'in_progress', 'failed'] },
  ];
  for (const expected of outcomes) {
    it(`${expected.to} ends ${expected.status} (${expected.end_reason})`, async () => {
      const user = await signUp(t);
      const agent = await createCallAgent(t, user, { voicemail: { action: 'leave_message', message: 'Hi, this is Ada from the bistro. Please call us back.' } });
      const call = await waitForEnd(t, user, (await placeCall(t, user, { agent_id: agent.id, to: expected.to })).id);
      assert.equal(call.status, expected.status);
      assert.equal(call.end_reason, expected.end_reason);
      const events = await t.request({ method: 'GET', url: `/v1/calls/${call.id}/events`, ...as(user) });
      assert.deepEqual(events.json().data.map((e: { status: string }) => e.status), expected.history);
      const answered = expected.history.includes('in_progress');
      assert.equal(call.answered_at !== null, answered);
      assert.equal(call.cost_usd > 0, answered);
      if (!answered) assert.equal(call.latency, null);
      if (expected.status === 'transferred') assert.equal(call.transferred_to, '+15550100999');
      if (expected.status === 'voicemail') assert.equal(call.transcript.at(-1).text, 'Hi, this is Ada from the bistro. Please call us back.');
      if (expected.end_reason === 'media_error') assert.equal(call.error.code, 'media_error');
      if (expected.end_reason === 'failed_to_connect') assert.equal(call.error.code, 'failed_to_connect');
    });
  }

  it('a caller script that interrupts: the agent turn is cut where the caller barged in', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user, { first_message: 'Hello and welcome to the bistro, where we serve fresh seasonal food every single day of the week.' });
    const call = await waitForEnd(
      t,
      user,
      (await placeCall(t, user, { agent_id: agent.id, to: '+15550100200', simulation: { caller_script: [{ text: 'Sorry, are you open tonight?', interrupt_after_ms: 1500 }, 'Thanks, goodbye!'] } })).id,
    );
    assert.equal(call.transcript[0].interrupted, true);
    assert.ok(call.transcript[0].text.length < 90);
    assert.equal(call.transcript[1].text, 'Sorry, are you open tonight?');
    assert.equal(call.end_reason, 'caller_goodbye');
  });

  it('a caller who goes quiet: asked whether they are still there, then silence_timeout', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user, { silence_timeout_seconds: 3 });
    const call = await waitForEnd(t, user, (await placeCall(t, user, { agent_id: agent.id, to: '+15550100200', simulation: { caller_script: [] } })).id);
    assert.equal(call.status, 'completed');
    assert.equal(call.end_reason, 'silence_timeout');
    assert.deepEqual(call.transcript.map((e: { text: string }) => e.text).slice(-1), ['Are you still there?']);
  });
});

describe('call events to the agent webhook', () => {
  it('sends listing A (call_id and agent_id on every envelope) and listing B, in order, signed', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user, { webhook_url: receiver.url });
    const worker = t.modules.webhooks.worker;
    const before = receiver.received.length;
    const call = await waitForEnd(t, user, (await placeCall(t, user, { agent_id: agent.id, to: '+15550100200' })).id);
    while ((await worker.runDueOnce()) > 0);
    const mine = receiver.received.slice(before).filter((r) => r.body.includes(call.id));
    const bodies = mine.map((r) => JSON.parse(r.body));
    const types = bodies.map((b) => b.type ?? b.event);
    assert.deepEqual(types, ['call.started', 'call.transcript', 'call.transcript', 'call.transcript', 'call.transcript', 'call.transcript', 'call.ended', 'call.completed']);
    for (const body of bodies.filter((b) => b.type)) {
      assert.equal(body.call_id, call.id);
      assert.equal(body.agent_id, agent.id);
      assert.match(body.event_id, /^evt_/);
    }
    assert.deepEqual(bodies[0].data, { direction: 'outbound', from: call.from, to: call.to });
    assert.deepEqual(bodies[1].data, { role: 'agent', text: call.transcript[0].text, start_ms: call.transcript[0].start_ms, end_ms: call.transcript[0].end_ms, turn: 1 });
    const ended = bodies[6].data;
    assert.equal(ended.status, 'completed');
    assert.equal(ended.duration_ms, call.duration_ms);
    assert.equal(ended.end_reason, 'caller_goodbye');
    assert.deepEqual(ended.latency, call.latency);
    assert.match(ended.recording_url, /\/recording\.mp3\?expires=\d+&signature=[0-9a-f]{64}$/);
    const completed = bodies[7];
    assert.equal(completed.event, 'call.completed');
    assert.equal(completed.data.call_id, call.id);
    assert.equal(completed.data.duration_seconds, call.duration_seconds);
    assert.match(completed.data.transcript, /^agent: Hello/);
    for (const hit of mine) {
      new Webhook(agent.webhook_secret).verify(hit.body, hit.headers as Record<string, string>);
      assert.equal(hit.headers['x-service-signature'], `sha256=${createHmac('sha256', agent.webhook_secret).update(hit.body).digest('hex')}`);
    }
  });

  it('webhook_events narrows both listings; a failed call sends call.ended and call.failed', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user, { webhook_url: receiver.url, webhook_events: ['call.ended', 'call.failed'] });
    const worker = t.modules.webhooks.worker;
    const before = receiver.received.length;
    const call = await waitForEnd(t, user, (await placeCall(t, user, { agent_id: agent.id, to: '+15550100101' })).id);
    while ((await worker.runDueOnce()) > 0);
    const bodies = receiver.received.slice(before).filter((r) => r.body.includes(call.id)).map((r) => JSON.parse(r.body));
    assert.deepEqual(bodies.map((b) => b.type ?? b.event), ['call.ended', 'call.failed']);
    assert.deepEqual(bodies[1].data, { call_id: call.id, agent_id: agent.id, from: call.from, to: call.to, status: 'busy', end_reason: 'busy' });
    assert.equal(bodies[0].data.recording_url, null);
  });
});

describe('functions during a call', () => {
  it('calls the agent function the caller asks for, signed, with the call id, and says the result', async () => {
    const fn = await startReceiver(() => ({ status: 200, body: JSON.stringify({ status: 'shipped' }) }));
    after(() => fn.close());
    const user = await signUp(t);
    const agent = await createCallAgent(t, user, {
      functions: [{ name: 'check_order', description: 'Check the status of an order', url: fn.url, parameters: { type: 'object', properties: {} } }],
    });
    const call = await waitForEnd(t, user, (await placeCall(t, user, { agent_id: agent.id, to: '+15550100200', simulation: { caller_script: ['Can you check the status of my order?', 'Thanks, goodbye!'] } })).id);
    assert.equal(fn.received.length, 1);
    const sent = JSON.parse(fn.received[0].body);
    assert.equal(sent.function, 'check_order');
    assert.equal(sent.call_id, call.id);
    assert.equal(sent.agent_id, agent.id);
    assert.equal(fn.received[0].headers['x-service-signature'], `sha256=${createHmac('sha256', agent.webhook_secret).update(fn.received[0].body).digest('hex')}`);
    assert.match(call.transcript[2].text, /shipped/);
    assert.equal(call.end_reason, 'caller_goodbye');
  });
});

describe('placing calls: refusals', () => {
  it('validates the number and the agent, honours the do-not-call list, refuses an empty wallet', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    const bad = await t.request({ method: 'POST', url: '/v1/calls/outbound', ...as(user), payload: { agent_id: agent.id, to: '12' } });
    assert.equal(bad.statusCode, 422);
    assert.equal(bad.json().errors[0].path, 'to');
    const noAgent = await t.request({ method: 'POST', url: '/v1/calls/outbound', ...as(user), payload: { agent_id: newId('agent'), to: '+15550100200' } });
    assert.equal(noAgent.statusCode, 422);
    assert.equal(noAgent.json().errors[0].path, 'agent_id');
    await t.platform.db.insertInto('dnc_numbers').values({ workspace_id: user.workspaceId, number: '+15550100222', reason: null, created_at: new Date() }).execute();
    const dnc = await t.request({ method: 'POST', url: '/v1/calls/outbound', ...as(user), payload: { agent_id: agent.id, to: '+1 555 010 0222' } });
    assert.equal(dnc.statusCode, 422);
    assert.equal(dnc.json().code, 'do_not_call');
    await t.platform.db.updateTable('wallets').set({ balance_micros: 0 }).where('workspace_id', '=', user.workspaceId).execute();
    const broke = await t.request({ method: 'POST', url: '/v1/calls/outbound', ...as(user), payload: { agent_id: agent.id, to: '+15550100200' } });
    assert.equal(broke.statusCode, 402);
    assert.equal(broke.json().code, 'insufficient_balance');
    const listed = await t.request({ method: 'GET', url: '/v1/calls', ...as(user) });
    assert.equal(listed.json().data.length, 0, 'no refused call was created');
  });

  it('a live call is ended when its cost reaches the balance (insufficient_balance)', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    // 0.0075 USD buys 5 seconds at 0.09 USD a minute.
    await t.platform.db.updateTable('wallets').set({ balance_micros: 7500 }).where('workspace_id', '=', user.workspaceId).execute();
    const call = await waitForEnd(t, user, (await placeCall(t, user, { agent_id: agent.id, to: '+15550100200' })).id);
    assert.equal(call.end_reason, 'insufficient_balance');
    assert.ok(call.duration_ms > 4000 && call.duration_ms <= 5000, `ended after ${call.duration_ms} ms`);
    assert.equal(call.duration_seconds, 5);
    const wallet = await t.platform.db.selectFrom('wallets').select('balance_micros').where('workspace_id', '=', user.workspaceId).executeTakeFirstOrThrow();
    assert.ok(Number(wallet.balance_micros) <= 0 && Number(wallet.balance_micros) > -1500, `balance ${wallet.balance_micros}`);
  });
});

describe('controlling calls', () => {
  it('hang-up: a queued call is canceled, a live one completed (api_hangup), an ended one is 409', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    const queued = await placeCall(t, user, { agent_id: agent.id, to: '+15550100200' });
    const canceled = await t.request({ method: 'POST', url: `/v1/calls/${queued.id}/hangup`, ...as(user) });
    assert.equal(canceled.statusCode, 200, canceled.body);
    assert.equal(canceled.json().status, 'canceled');
    assert.equal(canceled.json().end_reason, 'api_hangup');

    const live = await placeCall(t, user, { agent_id: agent.id, to: '+15550100200', simulation: { caller_script: [] } });
    await t.modules.calls.worker.runDueOnce();
    for (let i = 0; i < 200; i++) {
      const row = await t.request({ method: 'GET', url: `/v1/calls/${live.id}`, ...as(user) });
      if (row.json().status === 'in_progress') break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const hung = await t.request({ method: 'POST', url: `/v1/calls/${live.id}/hangup`, ...as(user) });
    assert.equal(hung.statusCode, 200);
    const ended = await waitForEnd(t, user, live.id);
    assert.equal(ended.status, 'completed');
    assert.equal(ended.end_reason, 'api_hangup');
    const again = await t.request({ method: 'POST', url: `/v1/calls/${live.id}/hangup`, ...as(user) });
    assert.equal(again.statusCode, 409);
    assert.equal(again.json().code, 'invalid_state');
  });

  it('transfer: a call in progress goes to the given number; a queued call is 409', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    const queued = await placeCall(t, user, { agent_id: agent.id, to: '+15550100200' });
    const early = await t.request({ method: 'POST', url: `/v1/calls/${queued.id}/transfer`, ...as(user), payload: {} });
    assert.equal(early.statusCode, 409);
    await t.modules.calls.worker.runDueOnce();
    for (let i = 0; i < 200; i++) {
      const row = await t.request({ method: 'GET', url: `/v1/calls/${queued.id}`, ...as(user) });
      if (row.json().status === 'in_progress') break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const moved = await t.request({ method: 'POST', url: `/v1/calls/${queued.id}/transfer`, ...as(user), payload: { to: '+1 555 010 0333' } });
    assert.equal(moved.statusCode, 200, moved.body);
    const ended = await waitForEnd(t, user, queued.id);
    assert.equal(ended.status, 'transferred');
    assert.equal(ended.transferred_to, '+15550100333');
  });

  it('analyze runs extraction again; DELETE keeps the row and cost, removes recording and transcript', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    const call = await waitForEnd(t, user, (await placeCall(t, user, { agent_id: agent.id, to: '+15550100200', simulation: { caller_script: ['Hi, my email is sam@example.com', 'Goodbye!'] } })).id);
    assert.deepEqual(call.extracted, {});
    const patched = await t.request({ method: 'PATCH', url: `/v1/agents/${agent.id}`, ...as(user), payload: { extraction_fields: [{ name: 'email', type: 'string', description: 'email address' }] } });
    assert.equal(patched.statusCode, 200, patched.body);
    const analyzed = await t.request({ method: 'POST', url: `/v1/calls/${call.id}/analyze`, ...as(user) });
    assert.equal(analyzed.statusCode, 200, analyzed.body);
    assert.equal(analyzed.json().extracted.email, 'sam@example.com');

    const removed = await t.request({ method: 'DELETE', url: `/v1/calls/${call.id}`, ...as(user) });
    assert.equal(removed.statusCode, 204);
    const kept = (await t.request({ method: 'GET', url: `/v1/calls/${call.id}`, ...as(user) })).json();
    assert.equal(kept.status, 'completed');
    assert.equal(kept.cost_usd, call.cost_usd);
    assert.deepEqual(kept.transcript, []);
    assert.equal(kept.recording_url, null);
    assert.equal((await t.request({ method: 'GET', url: `/v1/calls/${call.id}/recording.mp3`, ...as(user) })).statusCode, 404);
    assert.equal((await t.request({ method: 'GET', url: `/v1/calls/${call.id}/transcript`, ...as(user) })).statusCode, 404);
    const signed = new URL(call.recording_url);
    assert.equal((await t.app.inject({ method: 'GET', url: `${signed.pathname}${signed.search}` })).statusCode, 404);
  });
});

describe('listing and exporting calls', () => {
  it('lists newest first with filters and a cursor; exports CSV with extracted columns; other workspaces see nothing', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user, { extraction_fields: [{ name: 'email', type: 'string', description: 'email address' }] });
    const busy = await waitForEnd(t, user, (await placeCall(t, user, { agent_id: agent.id, to: '+15550100101' })).id);
    const done = await waitForEnd(t, user, (await placeCall(t, user, { agent_id: agent.id, to: '+15550100200', simulation: { caller_script: ['My email is ada@example.com', 'Bye!'] } })).id);
    const all = (await t.request({ method: 'GET', url: '/v1/calls?limit=1', ...as(user) })).json();
    assert.deepEqual(all.data.map((c: { id: string }) => c.id), [done.id]);
    assert.equal(all.has_more, true);
    const next = (await t.request({ method: 'GET', url: `/v1/calls?limit=1&cursor=${all.next_cursor}`, ...as(user) })).json();
    assert.deepEqual(next.data.map((c: { id: string }) => c.id), [busy.id]);
    const byStatus = (await t.request({ method: 'GET', url: '/v1/calls?status=busy', ...as(user) })).json();
    assert.deepEqual(byStatus.data.map((c: { id: string }) => c.id), [busy.id]);
    const byTo = (await t.request({ method: 'GET', url: `/v1/calls?to=${encodeURIComponent('+15550100200')}&agent_id=${agent.id}&direction=outbound`, ...as(user) })).json();
    assert.deepEqual(byTo.data.map((c: { id: string }) => c.id), [done.id]);
    assert.equal((await t.request({ method: 'GET', url: '/v1/calls?status=bogus', ...as(user) })).statusCode, 422);

    const csv = await t.request({ method: 'GET', url: '/v1/calls/export', ...as(user) });
    assert.equal(csv.statusCode, 200);
    assert.match(String(csv.headers['content-type']), /^text\/csv/);
    const rows = parse(csv.body, { columns: true }) as Array<Record<string, string>>;
    assert.deepEqual(rows.map((r) => r.id), [done.id, busy.id]);
    assert.equal(rows[0]['extracted.email'], 'ada@example.com');
    assert.equal(rows[1].status, 'busy');

    const stranger = await signUp(t);
    assert.equal((await t.request({ method: 'GET', url: `/v1/calls/${done.id}`, ...as(stranger) })).statusCode, 404);
    assert.equal((await t.request({ method: 'GET', url: '/v1/calls', ...as(stranger) })).json().data.length, 0);
  });
});

describe('concurrency and inbound calls', () => {
  it('calls beyond max_concurrent_calls wait in queued (never 429) and start when a slot frees', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    await t.platform.db.updateTable('workspaces').set({ max_concurrent_calls: 1 }).where('id', '=', user.workspaceId).execute();
    const first = await placeCall(t, user, { agent_id: agent.id, to: '+15550100200', simulation: { caller_script: ['Goodbye!'] } });
    const second = await placeCall(t, user, { agent_id: agent.id, to: '+15550100200', simulation: { caller_script: ['Goodbye!'] } });
    await t.modules.calls.worker.runDueOnce();
    const waiting = (await t.request({ method: 'GET', url: `/v1/calls/${second.id}`, ...as(user) })).json();
    assert.equal(waiting.status, 'queued');
    const firstDone = await waitForEnd(t, user, first.id);
    const secondDone = await waitForEnd(t, user, second.id);
    assert.equal(firstDone.status, 'completed');
    assert.equal(secondDone.status, 'completed');
    assert.ok(new Date(secondDone.started_at) >= new Date(firstDone.ended_at), 'the second started after the first ended');
  });

  it('an inbound sandbox call to an assigned number is answered by its agent', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    await assignSandboxNumber(t, user, agent.id, '+15550142001');
    const res = await t.request({ method: 'POST', url: '/v1/sandbox/inbound-call', ...as(user), payload: { to: '+15550142001', from: '+15550177777' } });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().direction, 'inbound');
    const call = await waitForEnd(t, user, res.json().id);
    assert.equal(call.status, 'completed');
    assert.equal(call.from, '+15550177777');
    const unknown = await t.request({ method: 'POST', url: '/v1/sandbox/inbound-call', ...as(user), payload: { to: '+15550142999', from: '+15550177777' } });
    assert.equal(unknown.statusCode, 422);
  });
});

securitySuite('calls', async () => t, {
  'GET /v1/calls': { scope: 'read-only', prepare: async () => ({ method: 'GET', url: '/v1/calls' }) },
  'GET /v1/calls/export': { scope: 'read-only', prepare: async () => ({ method: 'GET', url: '/v1/calls/export' }) },
  'POST /v1/calls/outbound': {
    scope: 'write',
    prepare: async (app, owner) => ({ method: 'POST', url: '/v1/calls/outbound', payload: { agent_id: (await createCallAgent(app, owner)).id, to: '+15550100101' } }),
  },
  'GET /v1/calls/{id}': { scope: 'read-only', ownedResource: true, prepare: async (app, owner) => ({ method: 'GET', url: `/v1/calls/${await insertEndedCall(app, owner)}` }) },
  'DELETE /v1/calls/{id}': { scope: 'write', ownedResource: true, prepare: async (app, owner) => ({ method: 'DELETE', url: `/v1/calls/${await insertEndedCall(app, owner)}` }) },
  'GET /v1/calls/{id}/recording': { scope: 'read-only', ownedResource: true, prepare: async (app, owner) => ({ method: 'GET', url: `/v1/calls/${await insertEndedCall(app, owner)}/recording` }) },
  'GET /v1/calls/{id}/recording.mp3': { scope: 'read-only', ownedResource: true, prepare: async (app, owner) => ({ method: 'GET', url: `/v1/calls/${await insertEndedCall(app, owner)}/recording.mp3` }) },
  'GET /v1/calls/{id}/transcript': { scope: 'read-only', ownedResource: true, prepare: async (app, owner) => ({ method: 'GET', url: `/v1/calls/${await insertEndedCall(app, owner)}/transcript` }) },
  'GET /v1/calls/{id}/events': { scope: 'read-only', ownedResource: true, prepare: async (app, owner) => ({ method: 'GET', url: `/v1/calls/${await insertEndedCall(app, owner)}/events` }) },
  'POST /v1/calls/{id}/hangup': { scope: 'write', ownedResource: true, prepare: async (app, owner) => ({ method: 'POST', url: `/v1/calls/${await insertEndedCall(app, owner)}/hangup` }) },
  'POST /v1/calls/{id}/transfer': { scope: 'write', ownedResource: true, prepare: async (app, owner) => ({ method: 'POST', url: `/v1/calls/${await insertEndedCall(app, owner)}/transfer`, payload: {} }) },
  'POST /v1/calls/{id}/analyze': { scope: 'write', ownedResource: true, prepare: async (app, owner) => ({ method: 'POST', url: `/v1/calls/${await insertEndedCall(app, owner)}/analyze` }) },
  'POST /v1/sandbox/inbound-call': { scope: 'write', prepare: async () => ({ method: 'POST', url: '/v1/sandbox/inbound-call', payload: { to: '+15550142555', from: '+15550177777' } }) },
});

describe('recordings in the database (BLOB_STORE=postgres)', () => {
  it('stores the MP3 in the blobs table and serves it, ranges included', async () => {
    const db = await buildTestApp({ env: { SANDBOX_SPEED: '50', BLOB_STORE: 'postgres' } });
    const user = await signUp(db);
    const agent = await createCallAgent(db, user);
    const call = await waitForEnd(db, user, (await placeCall(db, user, { agent_id: agent.id, to: '+15550100200', simulation: { caller_script: ['Goodbye!'] } })).id);
    const row = await db.platform.db.selectFrom('blobs').select(['key', 'size', 'content_type']).where('key', 'like', `%${call.id}%`).executeTakeFirstOrThrow();
    assert.equal(row.content_type, 'audio/mpeg');
    const whole = await db.request({ method: 'GET', url: `/v1/calls/${call.id}/recording.mp3`, ...as(user) });
    assert.equal(whole.rawPayload.length, row.size);
    assert.ok((await decodedMs(whole.rawPayload)) > 1000);
    const tail = await db.request({ method: 'GET', url: `/v1/calls/${call.id}/recording.mp3`, headers: { range: 'bytes=-10' }, ...as(user) });
    assert.equal(tail.statusCode, 206);
    assert.deepEqual(tail.rawPayload, whole.rawPayload.subarray(row.size - 10));
  });
});
