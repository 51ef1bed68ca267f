import assert from 'node:assert/strict';
import { once } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import { context, createContextKey, ROOT_CONTEXT } from '@opentelemetry/api';
import { after, describe, it } from 'node:test';
import { loadConfig } from '../src/config.ts';
import { createTelemetry } from '../src/platform/telemetry/telemetry.ts';
import { buildTestApp } from './support/app.ts';
import { signUp } from './support/fixtures.ts';
import { startOtlpReceiver, type ReceivedSpan } from './support/otlp-receiver.ts';
import { freePort } from './support/ports.ts';
import { startReceiver } from '../src/modules/webhooks/test-receiver.ts';
import { as, createCallAgent, placeCall, waitForEnd } from '../src/modules/calls/test-helpers.ts';

// OpenTelemetry end to end (DESIGN part 9, Observability): a sandbox call placed over HTTP is one
// trace, exported over OTLP/HTTP to a local collector: the request → the dialer's job → the call
// → each turn → its stages (and the tool it called), the post-call job, and every webhook
// delivery, whose POST carries the trace on to the receiver. Ids as attributes, never words.
// With OTEL_EXPORTER_OTLP_ENDPOINT unset nothing is exported and nothing carries a trace.

const collector = await startOtlpReceiver();
const hooks = await startReceiver();
const tool = await startReceiver(() => ({ status: 200, body: JSON.stringify({ status: 'shipped' }) }));
after(() => Promise.all([collector.close(), hooks.close(), tool.close()]));

const SCRIPT = ['Can you check the status of my order?', 'Thanks, goodbye!'];

async function sandboxCall(t: Awaited<ReturnType<typeof buildTestApp>>) {
  const user = await signUp(t);
  const agent = await createCallAgent(t, user, {
    webhook_url: hooks.url,
    functions: [{ name: 'check_order', description: 'Check the status of an order', url: tool.url, parameters: { type: 'object', properties: {} } }],
  });
  const placed = await placeCall(t, user, { agent_id: agent.id, to: '+15550100200', simulation: { caller_script: SCRIPT } });
  const call = await waitForEnd(t, user, placed.id);
  const worker = t.modules.webhooks.worker;
  while ((await worker.runDueOnce()) > 0);
  const deliveries = hooks.received.filter((r) => r.body.includes(call.id));
  return { user, agent, call, deliveries };
}

describe('tracing on (OTEL_EXPORTER_OTLP_ENDPOINT set)', async () => {
  const t = await buildTestApp({ env: { SANDBOX_SPEED: 'max', OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_SERVICE_NAME: 'vap-test' } });

  it('one trace: request → dialer job → call → turns → stages, post-call and webhook deliveries, with parent links and no words', async () => {
    const { user, agent, call, deliveries } = await sandboxCall(t);
    await t.platform.telemetry.flush();

    const request = collector.spans.find((s) => s.name === 'POST /v1/calls/outbound' && s.attributes['http.response.status_code'] === 201 && s.attributes['vap.request_id'] !== undefined);
    assert.ok(request, 'the request span was exported');
    assert.equal(request.kind, 2, 'a server span');
    assert.equal(request.attributes['http.route'], '/v1/calls/outbound');
    assert.equal(request.service, 'vap-test');
    assert.equal(request.encoding, 'protobuf', 'OTLP/HTTP protobuf by default, as the specification says');
    const trace = collector.spans.filter((s) => s.traceId === request.traceId);
    const byId = new Map(trace.map((s) => [s.spanId, s]));
    const parentOf = (span: ReceivedSpan) => (span.parentSpanId ? byId.get(span.parentSpanId) : undefined);
    const only = (name: string, parent: ReceivedSpan) => {
      const found = trace.filter((s) => s.name === name && s.parentSpanId === parent.spanId);
      assert.equal(found.length, 1, `one ${name} under ${parent.name}: ${found.length}`);
      return found[0];
    };

    const dialer = only('job calls', request);
    assert.deepEqual(
      [dialer.attributes['vap.job'], dialer.attributes['vap.call_id'], dialer.attributes['vap.workspace_id'], dialer.attributes['vap.agent_id']],
      ['calls', call.id, user.workspaceId, agent.id],
    );
    const callSpan = only('call', dialer);
    assert.deepEqual(
      ['vap.call_id', 'vap.agent_id', 'vap.workspace_id', 'vap.call.direction', 'vap.call.provider'].map((key) => callSpan.attributes[key]),
      [call.id, agent.id, user.workspaceId, 'outbound', 'sandbox'],
    );
    assert.equal(callSpan.attributes['vap.call.end_reason'], 'caller_goodbye');
    assert.equal(callSpan.attributes['vap.call.turns'], 2);

    // Every turn: the greeting (an agent turn: no caller stages) and the caller's two turns.
    const turns = trace.filter((s) => s.name === 'turn' && s.parentSpanId === callSpan.spanId).sort((a, b) => Number(a.attributes['turn.index']) - Number(b.attributes['turn.index']));
    assert.deepEqual(turns.map((s) => s.attributes['turn.kind']), ['agent', 'caller', 'caller']);
    const stagesOf = (turn: ReceivedSpan) => trace.filter((s) => s.parentSpanId === turn.spanId).map((s) => s.name).sort();
    assert.deepEqual(stagesOf(turns[0]), ['first_frame_out', 'tts.first_audio']);
    assert.deepEqual(stagesOf(turns[1]), ['first_frame_out', 'llm.first_token', 'stt', 'tool', 'tts.first_audio', 'vad.end_of_turn']);
    assert.deepEqual(stagesOf(turns[2]), ['first_frame_out', 'llm.first_token', 'stt', 'tts.first_audio', 'vad.end_of_turn']);
    for (const [i, turn] of turns.slice(1).entries()) assert.equal(turn.attributes.latency_ms, call.transcript[2 + 2 * i].latency_ms, 'the turn carries its latency');
    const toolSpan = trace.find((s) => s.name === 'tool' && s.parentSpanId === turns[1].spanId) as ReceivedSpan;
    assert.equal(toolSpan.attributes['tool.name'], 'check_order');
    assert.equal(toolSpan.attributes['tool.status'], '200');
    assert.equal(typeof toolSpan.attributes['tool.duration_ms'], 'number');
    for (const s of trace.filter((x) => parentOf(x)?.name === 'turn')) assert.equal(typeof s.attributes.duration_ms, 'number', `${s.name} has its duration`);

    // After the call, in the same trace; and every delivery: its job, its POST, the receiver's traceparent.
    const postCall = trace.filter((s) => s.name === 'job post-call');
    assert.ok(postCall.length >= 1 && postCall.every((s) => s.parentSpanId === request.spanId), 'post-call runs under the request');
    // Each attempt names its call and counts from 1.
    assert.deepEqual(
      postCall.map((s) => ['vap.job', 'vap.call_id', 'vap.workspace_id', 'vap.agent_id'].map((key) => s.attributes[key])),
      postCall.map(() => ['post-call', call.id, user.workspaceId, agent.id]),
    );
    assert.deepEqual(
      postCall.map((s) => s.attributes['vap.attempt']).sort(),
      postCall.map((_, i) => i + 1),
    );
    assert.deepEqual(deliveries.map((d) => JSON.parse(d.body).type ?? JSON.parse(d.body).event).slice(0, 1), ['call.started']);
    for (const delivery of deliveries) {
      const header = String(delivery.headers.traceparent);
      const [, traceId, spanId] = header.split('-');
      assert.equal(traceId, request.traceId, 'the webhook carries the trace');
      const post = byId.get(spanId);
      assert.equal(post?.name, 'POST webhook');
      assert.equal(post?.attributes['http.response.status_code'], 200);
      const job = post && parentOf(post);
      assert.equal(job?.name, 'job webhook-deliveries');
      assert.ok(job && ['call', 'job post-call'].includes(parentOf(job)?.name ?? ''), `a delivery's job is under the work that emitted it: ${job && parentOf(job)?.name}`);
    }
    assert.ok(deliveries.length >= 5);

    // Never content: no transcript line, no prompt, no tool result in any attribute of any span.
    const values = collector.spans.flatMap((s) => Object.values(s.attributes)).filter((v): v is string => typeof v === 'string');
    const words = [...call.transcript.map((e: { text: string }) => e.text), 'You are Ada', 'shipped', ...SCRIPT];
    for (const text of words) assert.ok(!values.some((v) => v.includes(text)), `no attribute quotes "${text}"`);

    // The incoming trace context of a request is honoured.
    const parent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await t.request({ method: 'GET', url: `/v1/calls/${call.id}`, ...as(user), headers: { traceparent: parent } });
    await t.platform.telemetry.flush();
    const read = collector.spans.find((s) => s.name === 'GET /v1/calls/:id' && s.traceId === '0af7651916cd43dd8448eb211c80319c');
    assert.equal(read?.parentSpanId, 'b7ad6b7169203331');
  });
  it('registers no context manager: entering a context holds nothing (no async hooks on every await, issue 32)', async () => {
    // With a context manager (AsyncLocalStorage) registered, `context.with` would make its context
    // active inside; V8's promise hooks would then stay on for the whole process.
    const probe = createContextKey('probe');
    const inside = await context.with(ROOT_CONTEXT.setValue(probe, 1), async () => {
      await Promise.resolve();
      return context.active();
    });
    assert.equal(inside.getValue(probe), undefined);
    assert.equal(context.active(), ROOT_CONTEXT);
    assert.ok(t.platform.telemetry.tracer, 'tracing is on');
  });
});

describe('reads sampled (TRACE_READS_RATIO): every write, call and job traced, reads by ratio', async () => {
  const t = await buildTestApp({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_SERVICE_NAME: 'vap-sampled', TRACE_READS_RATIO: '0' } });

  it('at 0 a read starts no trace, a write does; a read inside a sampled trace is traced, one in an unsampled trace is not', async () => {
    const user = await signUp(t);
    const agentId = (await createCallAgent(t, user)).id;
    const read = () => t.request({ method: 'GET', url: `/v1/agents/${agentId}`, ...as(user) });
    for (let i = 0; i < 20; i++) assert.equal((await read()).statusCode, 200);
    const sampled = '00-1af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const unsampled = '00-2af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00';
    for (const traceparent of [sampled, unsampled]) {
      const response = await t.request({ method: 'GET', url: `/v1/agents/${agentId}`, ...as(user), headers: { traceparent } });
      assert.equal(response.statusCode, 200);
    }
    await t.platform.telemetry.flush();
    const mine = collector.spans.filter((s) => s.service === 'vap-sampled');
    assert.equal(mine.filter((s) => s.name === 'POST /v1/agents').length, 1, 'the write is traced');
    const reads = mine.filter((s) => s.name === 'GET /v1/agents/:id');
    assert.deepEqual(reads.map((s) => s.traceId), ['1af7651916cd43dd8448eb211c80319c'], 'only the read of a sampled trace');
  });

  it("a voice session's call joins the trace of the request that created the session", async () => {
    const user = await signUp(t);
    const agentId = (await createCallAgent(t, user)).id;
    const created = await t.request({ method: 'POST', url: '/v1/voice/sessions', ...as(user), payload: { agent_id: agentId, external_user_id: 'u-1' } });
    assert.equal(created.statusCode, 201, created.body);
    await t.platform.telemetry.flush();
    const request = collector.spans.find((s) => s.service === 'vap-sampled' && s.name === 'POST /v1/voice/sessions');
    assert.ok(request, 'the request span was exported');
    const row = await t.platform.db.selectFrom('calls').select('trace_parent').where('id', '=', created.json().call_id).executeTakeFirstOrThrow();
    assert.equal(row.trace_parent?.split('-')[1], request.traceId);
  });
});

describe('a request whose client goes away before the answer', async () => {
  let reachedBody: () => void = () => {};
  const bodyReached = new Promise<void>((resolve) => {
    reachedBody = resolve;
  });
  // preParsing runs after every onRequest hook (the tracing one among them) and before the body is read.
  const t = await buildTestApp({
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_SERVICE_NAME: 'vap-aborted' },
    instrument: (bare) =>
      bare.addHook('preParsing', (request, _reply, payload, done) => {
        if (request.url === '/v1/agents') reachedBody();
        done(null, payload);
      }),
  });

  it('still ends its span, marked aborted and not as a server error', async () => {
    const user = await signUp(t);
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    // The headers of a write and half its body, then the connection is gone.
    const socket = net.connect(port, '127.0.0.1');
    await once(socket, 'connect');
    socket.write(
      `POST /v1/agents HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${user.accessToken}\r\nX-Workspace-Id: ${user.workspaceId}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 200\r\n\r\n{"name":"half',
    );
    await bodyReached;
    socket.destroy();
    const aborted = () => collector.spans.find((s) => s.service === 'vap-aborted' && s.name === 'POST /v1/agents' && s.attributes['vap.aborted'] === true);
    const deadline = Date.now() + 30_000;
    while (!aborted() && Date.now() < deadline) {
      await t.platform.telemetry.flush();
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const span = aborted();
    assert.ok(span, 'the aborted request span was exported');
    assert.equal(span.attributes['http.route'], '/v1/agents');
    assert.equal(span.statusCode, 0, 'an abort is not a server error');
    assert.equal(span.attributes['http.response.status_code'], undefined, 'no answer was sent');
  });
});

describe('OTEL_EXPORTER_OTLP_PROTOCOL=http/json', async () => {
  const t = await buildTestApp({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_SERVICE_NAME: 'vap-json', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' } });

  it('exports the same spans in the JSON encoding; another protocol is refused at start', async () => {
    const user = await signUp(t);
    await createCallAgent(t, user);
    await t.platform.telemetry.flush();
    const write = collector.spans.find((s) => s.service === 'vap-json' && s.name === 'POST /v1/agents');
    assert.ok(write, 'the write was exported');
    assert.equal(write.encoding, 'json');
    assert.equal(write.attributes['http.response.status_code'], 201);
    assert.match(write.traceId, /^[0-9a-f]{32}$/);
    assert.throws(() => loadConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }), /OTEL_EXPORTER_OTLP_PROTOCOL/);
  });
});

describe('tracing off (no endpoint)', async () => {
  const t = await buildTestApp({ env: { SANDBOX_SPEED: 'max' } });

  it('exports nothing, stores no trace context and sends no traceparent', async () => {
    assert.equal(t.platform.telemetry.tracer, undefined, 'no SDK tracer');
    const before = collector.spans.length;
    const exportsBefore = collector.exports;
    const { call, deliveries } = await sandboxCall(t);
    await t.platform.telemetry.flush();
    assert.equal(collector.spans.length, before);
    assert.equal(collector.exports, exportsBefore);
    assert.ok(!collector.spans.some((s) => s.attributes['vap.call_id'] === call.id));
    const row = await t.platform.db.selectFrom('calls').select('trace_parent').where('id', '=', call.id).executeTakeFirstOrThrow();
    assert.equal(row.trace_parent, null);
    assert.ok(deliveries.length >= 5);
    assert.ok(deliveries.every((d) => d.headers.traceparent === undefined));
  });
});

describe('a collector that is down', () => {
  it('never fails a flush or the shutdown: the export error is reported', async () => {
    const errors: unknown[] = [];
    const config = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${await freePort()}`, OTEL_EXPORTER_OTLP_TIMEOUT: '300' }).telemetry;
    const telemetry = await createTelemetry(config, { onError: (error) => errors.push(error) });
    telemetry.tracer?.startSpan('lost').end();
    await telemetry.flush();
    await telemetry.shutdown();
    assert.ok(errors.length >= 1, 'the failed export was reported');
  });
});
