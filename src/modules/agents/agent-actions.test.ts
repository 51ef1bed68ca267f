import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp, type TestUser } from '../../../test/support/fixtures.ts';
import { manualClock } from '../../platform/clock.ts';
import { createWebhookWorker } from '../webhooks/worker.ts';

// test-function, webhook/test and chat against real local HTTP servers.

interface Hit {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A function endpoint: records every request; the path decides the answer. */
async function startFunctionServer() {
  const hits: Hit[] = [];
  const held: http.ServerResponse[] = [];
  const heldWaiters: Array<() => void> = [];
  const sockets = new Set<import('node:net').Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const hit = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      hits.push(hit);
      const path = hit.url.split('?')[0];
      if (path === '/slow') return; // never answers
      if (path === '/held') {
        // answered when the test releases it
        held.push(res);
        for (const waiter of heldWaiters.splice(0)) waiter();
        return;
      }
      if (path === '/text') return res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(5000));
      if (path === '/fail') return res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"down"}');
      if (path === '/hook') return res.writeHead(204).end();
      if (path === '/moved') return res.writeHead(302, { location: '/orders' }).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, status: 'shipped', echo: hit.body ? JSON.parse(hit.body).arguments : null }));
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    hits,
    /** Resolves once a request to /held is waiting. */
    async waitForHeld() {
      while (held.length === 0) await new Promise<void>((resolve) => heldWaiters.push(resolve));
    },
    /** Answers the requests waiting on /held. */
    releaseHeld() {
      for (const res of held.splice(0)) res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const verify = (secret: string, body: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

describe('agent actions', async () => {
  // Started at the real time: the Standard Webhooks library checks signed timestamps against it.
  const clock = manualClock(new Date());
  const t = await buildTestApp({ clock, env: { WEBHOOK_RETRY_SCHEDULE: '0,1s', WEBHOOK_TIMEOUT_MS: '2000' } });
  const fnServer = await startFunctionServer();
  after(() => fnServer.close());

  async function agentWith(user: TestUser, extra: Record<string, unknown> = {}) {
    const res = await t.request({
      method: 'POST',
      url: '/v1/agents',
      token: user.accessToken,
      payload: {
        name: 'Tools agent',
        first_message: 'Hi {{first_name}}, this is the shop.',
        transfer_number: '+15550100200',
        end_call_phrases: ['that is everything'],
        functions: [
          { name: 'check_order', description: 'Check the status of an order', url: `${fnServer.base}/orders`, parameters: { type: 'object', properties: { order_id: { type: 'string' } } } },
          { name: 'slow_lookup', description: 'Slow', url: `${fnServer.base}/slow`, timeout_ms: 300 },
          { name: 'long_text', description: 'Text', url: `${fnServer.base}/text` },
          { name: 'broken', description: 'Broken', url: `${fnServer.base}/fail` },
          { name: 'find_store', description: 'Find a store', url: `${fnServer.base}/stores?country=us`, method: 'GET' },
        ],
        ...extra,
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  }

  describe('POST /v1/agents/{id}/test-function', () => {
    it('calls the function signed with the agent secret and returns status, parsed body and duration', async () => {
      const user = await signUp(t);
      const agent = await agentWith(user);
      const before = fnServer.hits.length;
      const res = await t.request({
        method: 'POST',
        url: `/v1/agents/${agent.id}/test-function`,
        token: user.accessToken,
        payload: { name: 'check_order', arguments: { order_id: 'A-17' } },
      });
      assert.equal(res.statusCode, 200, res.body);
      const result = res.json();
      assert.equal(result.status, 200);
      assert.deepEqual(result.body, { ok: true, status: 'shipped', echo: { order_id: 'A-17' } });
      assert.equal(typeof result.duration_ms, 'number');
      assert.equal(result.error, null);

      assert.equal(fnServer.hits.length, before + 1);
      const hit = fnServer.hits[before];
      assert.equal(hit.method, 'POST');
      assert.equal(hit.headers['content-type'], 'application/json');
      assert.equal(hit.headers['x-service-signature'], verify(agent.webhook_secret, hit.body));
      const sent = JSON.parse(hit.body);
      assert.equal(sent.function, 'check_order');
      assert.equal(sent.agent_id, agent.id);
      assert.deepEqual(sent.arguments, { order_id: 'A-17' });
      // The Standard Webhooks headers verify with the same secret.
      new Webhook(agent.webhook_secret).verify(hit.body, {
        'webhook-id': String(hit.headers['webhook-id']),
        'webhook-timestamp': String(hit.headers['webhook-timestamp']),
        'webhook-signature': String(hit.headers['webhook-signature']),
      });
    });

    it('signs with the new secret after a rotation', async () => {
      const user = await signUp(t);
      const agent = await agentWith(user);
      const rotated = await t.request({ method: 'POST', url: `/v1/agents/${agent.id}/webhook-secret/rotate`, token: user.accessToken });
      const { webhook_secret } = rotated.json();
      const before = fnServer.hits.length;
      await t.request({ method: 'POST', url: `/v1/agents/${agent.id}/test-function`, token: user.accessToken, payload: { name: 'check_order' } });
      const hit = fnServer.hits[before];
      assert.equal(hit.headers['x-service-signature'], verify(webhook_secret, hit.body));
    });

    it("reports a timeout without failing the request: the call went out stamped by the injected clock, and the function's own timeout_ms ended it", async () => {
      const user = await signUp(t);
      const agent = await agentWith(user, {
        functions: [
          { name: 'slow_lookup', description: 'Slow', url: `${fnServer.base}/slow`, timeout_ms: 300 },
          { name: 'patient', description: 'Waits long', url: `${fnServer.base}/held`, timeout_ms: 30_000 },
        ],
      });
      clock.advance(60_000);
      const before = fnServer.hits.length;
      const call = (name: string) => t.request({ method: 'POST', url: `/v1/agents/${agent.id}/test-function`, token: user.accessToken, payload: { name, arguments: {} } });
      // No stopwatch: a call allowed 30 s, sent first, is still waiting when the one allowed 300 ms
      // has timed out — so that one ended on its own timeout_ms, not on a default or the other's.
      let patientAnswered = false;
      const patient = call('patient').then((res) => {
        patientAnswered = true;
        return res;
      });
      await fnServer.waitForHeld();
      const res = await call('slow_lookup');
      assert.equal(res.statusCode, 200, res.body);
      const result = res.json();
      assert.equal(result.status, null);
      assert.equal(result.body, null);
      assert.equal(result.error.code, 'timeout');
      assert.ok(Number.isInteger(result.duration_ms) && result.duration_ms > 0, `a measured duration: ${result.duration_ms}`);
      assert.equal(patientAnswered, false, 'the 30 s call is still waiting');
      fnServer.releaseHeld();
      const answered = await patient;
      assert.equal(answered.statusCode, 200, answered.body);
      assert.deepEqual([answered.json().status, answered.json().error], [200, null]);

      const sent = fnServer.hits.slice(before);
      assert.deepEqual(sent.map((h) => h.url), ['/held', '/slow'], 'the timed-out call was sent, then left unanswered');
      assert.equal(JSON.parse(sent[1].body).timestamp, clock.now().toISOString());
      assert.equal(sent[1].headers['webhook-timestamp'], String(Math.floor(clock.now().getTime() / 1000)));
    });

    it('returns a text excerpt for a non-JSON body and passes error statuses through', async () => {
      const user = await signUp(t);
      const agent = await agentWith(user);
      const text = await t.request({ method: 'POST', url: `/v1/agents/${agent.id}/test-function`, token: user.accessToken, payload: { name: 'long_text' } });
      assert.equal(text.json().status, 200);
      assert.equal(typeof text.json().body, 'string');
      assert.ok(text.json().body.length <= 2001);
      const broken = await t.request({ method: 'POST', url: `/v1/agents/${agent.id}/test-function`, token: user.accessToken, payload: { name: 'broken' } });
      assert.equal(broken.json().status, 503);
      assert.deepEqual(broken.json().body, { error: 'down' });
    });

    it('does not follow a redirect with the signed request: the 3xx is the answer', async () => {
      const user = await signUp(t);
      const agent = await agentWith(user, { functions: [{ name: 'moved', description: 'Moved away', url: `${fnServer.base}/moved` }] });
      const before = fnServer.hits.length;
      const res = await t.request({ method: 'POST', url: `/v1/agents/${agent.id}/test-function`, token: user.accessToken, payload: { name: 'moved', arguments: {} } });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().status, 302);
      assert.deepEqual(fnServer.hits.slice(before).map((h) => h.url), ['/moved']);
    });

    it('sends the arguments of a GET function as query parameters', async () => {
      const user = await signUp(t);
      const agent = await agentWith(user);
      const before = fnServer.hits.length;
      const res = await t.request({ method: 'POST', url: `/v1/agents/${agent.id}/test-function`, token: user.accessToken, payload: { name: 'find_store', arguments: { city: 'Boston', radius: 5 } } });
      assert.equal(res.statusCode, 200, res.body);
      const hit = fnServer.hits[before];
      assert.equal(hit.method, 'GET');
      const query = new URL(hit.url, fnServer.base).searchParams;
      assert.deepEqual([query.get('country'), query.get('city'), query.get('radius')], ['us', 'Boston', '5']);
      assert.equal(hit.headers['x-service-signature'], verify(agent.webhook_secret, ''));
    });

    it('refuses an unknown function name with 422 naming it', async () => {
      const user = await signUp(t);
      const agent = await agentWith(user);
      const res = await t.request({ method: 'POST', url: `/v1/agents/${agent.id}/test-function`, token: user.accessToken, payload: { name: 'nope' } });
      assert.equal(res.statusCode, 422, res.body);
      assert.deepEqual(res.json().errors.map((e: { path: string }) => e.path), ['name']);
    });
  });

  describe('POST /v1/agents/{id}/webhook/test', () => {
    it('emits webhook.test to the agent webhook only, delivered signed to a local receiver', async () => {
      const user = await signUp(t);
      const agent = await agentWith(user, { webhook_url: `${fnServer.base}/hook` });
      const res = await t.request({ method: 'POST', url: `/v1/agents/${agent.id}/webhook/test`, token: user.accessToken });
      assert.equal(res.statusCode, 202, res.body);
      const { event_id } = res.json();
      assert.match(event_id, /^evt_/);

      const before = fnServer.hits.length;
      const p = t.platform;
      const worker = createWebhookWorker({ database: p.database, clock: p.clock, webhooks: p.config.webhooks, outbound: p.outbound, logger: p.logger });
      for (let i = 0; i < 20 && fnServer.hits.length === before; i++) await worker.runDueOnce();
      const delivered = fnServer.hits.slice(before).filter((h) => h.url === '/hook');
      assert.equal(delivered.length, 1);
      const body = JSON.parse(delivered[0].body);
      assert.equal(body.event, 'webhook.test');
      assert.equal(body.id, event_id);
      assert.equal(typeof body.data.message, 'string');
      assert.equal(delivered[0].headers['x-service-signature'], verify(agent.webhook_secret, delivered[0].body));
    });

    it('is 409 invalid_state when the agent has no webhook_url', async () => {
      const user = await signUp(t);
      const agent = await agentWith(user);
      const res = await t.request({ method: 'POST', url: `/v1/agents/${agent.id}/webhook/test`, token: user.accessToken, payload: { message: 'ping' } });
      assert.equal(res.statusCode, 409, res.body);
      assert.equal(res.json().code, 'invalid_state');
    });
  });

  describe('POST /v1/agents/{id}/chat', () => {
    it('answers a message without a conversation_id and starts a conversation with the greeting', async () => {
      const user = await signUp(t);
      const agent = await agentWith(user);
      const res = await t.request({ method: 'POST', url: `/v1/agents/${agent.id}/chat`, token: user.accessToken, payload: { message: 'Hello there', variables: { first_name: 'Ada' } } });
      assert.equal(res.statusCode, 200, res.body);
      const reply = res.json();
      assert.match(reply.conversation_id, /^conv_[0-9a-z]{26}$/);
      assert.equal(typeof reply.reply, 'string');
      assert.ok(reply.reply.length > 0);
      assert.ok(Array.isArray(reply.actions));
      assert.equal(reply.ended, false);
      const row = await t.platform.db.selectFrom('agent_conversations').selectAll().where('id', '=', reply.conversation_id).executeTakeFirstOrThrow();
      assert.deepEqual(row.turns.map((turn) => turn.role), ['agent', 'user', 'agent']);
      assert.equal(row.turns[0].text, 'Hi Ada, this is the shop.');
      assert.deepEqual(row.variables, { first_name: 'Ada' });
    });

    it('continues a conversation by conversation_id, calls functions and transfers on request', async () => {
      const user = await signUp(t);
      const agent = await agentWith(user);
      const first = await t.request({ method: 'POST', url: `/v1/agents/${agent.id}/chat`, token: user.accessToken, payload: { message: 'Hi' } });
      const conversationId = first.json().conversation_id;
      const before = fnServer.hits.length;
      const order = await t.request({
        method: 'POST',
        url: `/v1/agents/${agent.id}/chat`,
        token: user.accessToken,
        payload: { message: 'Can you check the status of my order?', conversation_id: conversationId },
      });
      assert.equal(order.statusCode, 200, order.body);
      assert.equal(order.json().conversation_id, conversationId);
      const call = order.json().actions.find((a: { type: string }) => a.type === 'function_call');
      assert.ok(call, `no function call in ${order.body}`);
      assert.equal(call.name, 'check_order');
      assert.equal(call.result.status, 200);
      const hit = fnServer.hits.slice(before).find((h) => h.url === '/orders');
      assert.ok(hit);
      assert.equal(hit.headers['x-service-signature'], verify(agent.webhook_secret, hit.body));
      assert.equal(JSON.parse(hit.body).conversation_id, conversationId);

      const human = await t.request({
        method: 'POST',
        url: `/v1/agents/${agent.id}/chat`,
        token: user.accessToken,
        payload: { message: 'I want to speak to a human please', conversation_id: conversationId },
      });
      assert.equal(human.statusCode, 200, human.body);
      assert.deepEqual(
        human.json().actions.filter((a: { type: string }) => a.type === 'transfer_call').map((a: { to: string }) => a.to),
        ['+15550100200'],
      );
      assert.equal(human.json().ended, true);
      const row = await t.platform.db.selectFrom('agent_conversations').selectAll().where('id', '=', conversationId).executeTakeFirstOrThrow();
      assert.equal(row.turns.length, 7);
      assert.equal(row.ended, true);
      const more = await t.request({ method: 'POST', url: `/v1/agents/${agent.id}/chat`, token: user.accessToken, payload: { message: 'Hello?', conversation_id: conversationId } });
      assert.equal(more.statusCode, 409, more.body);
    });

    it('is 404 for a conversation of another agent or workspace, 422 for a long message', async () => {
      const user = await signUp(t);
      const agent = await agentWith(user);
      const other = await agentWith(user);
      const first = await t.request({ method: 'POST', url: `/v1/agents/${agent.id}/chat`, token: user.accessToken, payload: { message: 'Hi' } });
      const conversationId = first.json().conversation_id;
      const wrongAgent = await t.request({ method: 'POST', url: `/v1/agents/${other.id}/chat`, token: user.accessToken, payload: { message: 'Hi', conversation_id: conversationId } });
      assert.equal(wrongAgent.statusCode, 404, wrongAgent.body);
      const stranger = await signUp(t);
      const strangerAgent = await agentWith(stranger);
      const wrongWorkspace = await t.request({ method: 'POST', url: `/v1/agents/${strangerAgent.id}/chat`, token: stranger.accessToken, payload: { message: 'Hi', conversation_id: conversationId } });
      assert.equal(wrongWorkspace.statusCode, 404, wrongWorkspace.body);
      const long = await t.request({ method: 'POST', url: `/v1/agents/${agent.id}/chat`, token: user.accessToken, payload: { message: 'x'.repeat(2001) } });
      assert.equal(long.statusCode, 422, long.body);
      assert.deepEqual(long.json().errors.map((e: { path: string }) => e.path), ['message']);
    });

    it('ends the conversation on an end-call phrase', async () => {
      const user = await signUp(t);
      const agent = await agentWith(user);
      const res = await t.request({ method: 'POST', url: `/v1/agents/${agent.id}/chat`, token: user.accessToken, payload: { message: 'Thanks, that is everything' } });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().ended, true);
      assert.ok(res.json().actions.some((a: { type: string }) => a.type === 'end_call'));
    });
  });
});


