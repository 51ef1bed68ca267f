import assert from 'node:assert/strict';
import os from 'node:os';
import { describe, it } from 'node:test';
import { buildTestApp } from '../../../test/support/app.ts';
import { insertCallRow } from '../../../test/support/call-rows.ts';
import { signUp, type TestUser } from '../../../test/support/fixtures.ts';
import { newId } from '../../platform/ids.ts';
import { as, assignSandboxNumber, createCallAgent, placeCall, waitForTerminal } from './test-helpers.ts';

// The calls routes' own rules (routes/read.ts, routes/control.ts) and the module's wiring
// (module.ts) over HTTP, on call rows and recordings written directly: the recording's ranges,
// 409 while it is made, 404 once gone; the transcript by Accept; signed links without credentials;
// the export as a download; DELETE removing the stored recording; the created call named in the
// audit log. Quick (no call runs); the calls themselves are in calls.test.ts.

const t = await buildTestApp();
const blobs = t.platform.providers.blobs;
/** 100 bytes, each its own index: a range's bytes are its offsets. */
const MP3 = Buffer.from(Array.from({ length: 100 }, (_, i) => i));

const TRANSCRIPT = [
  { role: 'agent', text: 'Hello, this is Ada.', start_ms: 0, end_ms: 900 },
  { role: 'user', text: 'Hi Ada.', start_ms: 1200, end_ms: 1800 },
];

/** An ended call of a new agent with TRANSCRIPT; its recording ready (MP3 stored), pending, named but not stored, or none. */
async function endedCall(user: TestUser, fields: { recording?: 'ready' | 'pending' | 'missing-blob' | 'none'; deleted?: boolean } = {}) {
  const agent = await createCallAgent(t, user);
  const recording = fields.recording ?? 'ready';
  const id = newId('call');
  const key = `recordings/${user.workspaceId}/${id}.mp3`;
  await insertCallRow(t.platform.db, { workspaceId: user.workspaceId, agentId: agent.id }, 'completed', {
    id,
    transcript: JSON.stringify(TRANSCRIPT),
    recording_status: recording === 'none' ? null : recording === 'pending' ? 'pending' : 'ready',
    recording_key: recording === 'ready' || recording === 'missing-blob' ? key : null,
    content_deleted_at: fields.deleted ? new Date() : null,
  });
  if (recording === 'ready') await blobs.put(key, MP3, 'audio/mpeg');
  return { id, key };
}

/** The app's vap_calls_queued gauge, read as a scrape reads it. */
async function queuedGauge(): Promise<number> {
  const gauge = t.platform.metrics.registry.getSingleMetric('vap_calls_queued');
  assert.ok(gauge, 'the calls module registers its gauges');
  return (await gauge.get()).values[0]?.value ?? 0;
}

const get = (user: TestUser | null, url: string, headers: Record<string, string> = {}) => t.request({ method: 'GET', url, headers, ...(user ? as(user) : {}) });

describe('the recording', () => {
  it('whole: audio/mpeg, Accept-Ranges, private caching, the stored bytes; at both paths', async () => {
    const user = await signUp(t);
    const { id } = await endedCall(user);
    for (const suffix of ['/recording', '/recording.mp3']) {
      const res = await get(user, `/v1/calls/${id}${suffix}`);
      assert.equal(res.statusCode, 200, suffix);
      assert.deepEqual(
        [res.headers['content-type'], res.headers['accept-ranges'], res.headers['cache-control'], res.headers['content-range']],
        ['audio/mpeg', 'bytes', 'private, max-age=3600', undefined],
        suffix,
      );
      assert.deepEqual(res.rawPayload, MP3, suffix);
    }
  });

  it('a range is 206 with its bytes and Content-Range; an unsatisfiable one 416 with the size; others the whole', async () => {
    const user = await signUp(t);
    const { id } = await endedCall(user);
    const cases: Array<[string, number, [number, number] | null]> = [
      ['bytes=0-9', 206, [0, 9]],
      ['bytes=10-19', 206, [10, 19]],
      ['bytes=90-', 206, [90, 99]],
      ['bytes=99-99', 206, [99, 99]],
      ['bytes=95-500', 206, [95, 99]],
      ['bytes=-10', 206, [90, 99]],
      ['bytes=-1', 206, [99, 99]],
      ['bytes=-500', 206, [0, 99]],
      [' bytes=0-0 ', 206, [0, 0]],
      ['bytes=100-', 416, null],
      ['bytes=100-200', 416, null],
      ['bytes=20-10', 416, null],
      ['bytes=-0', 416, null],
      ['bytes=-', 200, null],
      ['bytes=0-1,5-6', 200, null],
      ['items=0-9', 200, null],
      ['xbytes=0-9', 200, null],
      ['bytes=a-9', 200, null],
    ];
    for (const [range, status, span] of cases) {
      const res = await get(user, `/v1/calls/${id}/recording`, { range });
      assert.equal(res.statusCode, status, range);
      if (status === 206 && span) {
        assert.equal(res.headers['content-range'], `bytes ${span[0]}-${span[1]}/100`, range);
        assert.deepEqual(res.rawPayload, MP3.subarray(span[0], span[1] + 1), range);
      } else if (status === 416) {
        assert.equal(res.headers['content-range'], 'bytes */100', range);
        assert.deepEqual([res.json().code, res.json().detail], ['range_not_satisfiable', 'the recording has 100 bytes'], range);
      } else {
        assert.deepEqual(res.rawPayload, MP3, range);
      }
    }
  });

  it('409 recording_not_ready with Retry-After while pending; 404 when there is none, its blob is gone, or the content was deleted', async () => {
    const user = await signUp(t);
    const pending = await endedCall(user, { recording: 'pending' });
    const res = await get(user, `/v1/calls/${pending.id}/recording.mp3`);
    assert.deepEqual(
      [res.statusCode, res.json().code, res.json().detail, res.headers['retry-after']],
      [409, 'recording_not_ready', "the recording is being made from the call's audio; retry shortly", '5'],
    );
    for (const fields of [{ recording: 'none' }, { recording: 'missing-blob' }, { deleted: true }, { recording: 'pending', deleted: true }] as const) {
      const { id } = await endedCall(user, fields);
      const gone = await get(user, `/v1/calls/${id}/recording`);
      assert.deepEqual([gone.statusCode, gone.json().code, gone.json().detail], [404, 'not_found', 'recording not found'], JSON.stringify(fields));
    }
  });
});

describe('the recording, its blob gone between its size and its bytes', () => {
  it('404 recording not found, whole or in part', async () => {
    const user = await signUp(t);
    const { id } = await endedCall(user);
    const { get: whole, getRange } = blobs;
    blobs.get = async () => null;
    blobs.getRange = async () => null;
    try {
      for (const headers of [{}, { range: 'bytes=0-9' }] as Array<Record<string, string>>) {
        const res = await get(user, `/v1/calls/${id}/recording`, headers);
        assert.deepEqual([res.statusCode, res.json().code, res.json().detail], [404, 'not_found', 'recording not found'], JSON.stringify(headers));
      }
    } finally {
      blobs.get = whole;
      blobs.getRange = getRange;
    }
  });
});

describe('the transcript', () => {
  it('JSON by default and when JSON is acceptable; text/plain lines when only text is asked for', async () => {
    const user = await signUp(t);
    const { id } = await endedCall(user);
    const lines = 'agent: Hello, this is Ada.\nuser: Hi Ada.';
    const json = { call_id: id, transcript: TRANSCRIPT };
    for (const [accept, expected] of [
      [undefined, json],
      ['application/json', json],
      ['text/plain', lines],
      ['text/plain; q=0.9', lines],
      ['text/plain, application/json', json],
    ] as const) {
      const res = await get(user, `/v1/calls/${id}/transcript`, accept ? { accept } : {});
      assert.equal(res.statusCode, 200, accept);
      if (typeof expected === 'string') {
        assert.deepEqual([res.headers['content-type'], res.body], ['text/plain; charset=utf-8', expected], accept);
      } else {
        assert.deepEqual(res.json(), expected, accept);
      }
    }
  });

  it('a query other than a signed link\'s is refused: 422 naming it', async () => {
    const user = await signUp(t);
    const { id } = await endedCall(user);
    const res = await get(user, `/v1/calls/${id}/transcript?format=text`);
    assert.deepEqual([res.statusCode, res.json().code, res.json().errors], [422, 'validation_failed', [{ path: 'query.format', message: 'is not a known field' }]]);
  });

  it('a call whose content was deleted has no transcript: 404', async () => {
    const user = await signUp(t);
    const { id } = await endedCall(user, { deleted: true });
    const res = await get(user, `/v1/calls/${id}/transcript`);
    assert.deepEqual([res.statusCode, res.json().detail], [404, 'transcript not found']);
  });
});

describe('the list and a call\'s history', () => {
  it('GET /v1/calls lists the workspace\'s calls; GET /v1/calls/{id}/events its states', async () => {
    const user = await signUp(t);
    const { id } = await endedCall(user);
    const list = await get(user, '/v1/calls');
    assert.equal(list.statusCode, 200);
    assert.deepEqual(list.json().data.map((call: { id: string }) => call.id), [id]);
    const events = await get(user, `/v1/calls/${id}/events`);
    assert.equal(events.statusCode, 200);
    assert.deepEqual(events.json().data.map((event: { status: string }) => event.status), ['completed']);
  });
});

describe('signed links', () => {
  it("the call's links serve its recording and transcript without credentials; another call's signature does not", async () => {
    const user = await signUp(t);
    const { id } = await endedCall(user);
    const other = await endedCall(user);
    const call = (await get(user, `/v1/calls/${id}`)).json();
    const recording = new URL(call.recording_url);
    const transcript = new URL(call.transcript_url);
    assert.equal(recording.pathname, `/v1/calls/${id}/recording.mp3`);
    assert.equal(transcript.pathname, `/v1/calls/${id}/transcript`);
    const byLink = await get(null, `${recording.pathname}${recording.search}`, { range: 'bytes=0-3' });
    assert.deepEqual([byLink.statusCode, byLink.rawPayload], [206, MP3.subarray(0, 4)]);
    assert.deepEqual((await get(null, `${transcript.pathname}${transcript.search}`)).json().call_id, id);
    const borrowed = await get(null, `/v1/calls/${other.id}/transcript${transcript.search}`);
    assert.equal(borrowed.statusCode, 401);
  });
});

describe('the export', () => {
  it('a CSV download: text/csv in UTF-8, attachment named calls.csv, a header row and the call', async () => {
    const user = await signUp(t);
    const { id } = await endedCall(user);
    const res = await get(user, '/v1/calls/export');
    assert.deepEqual([res.statusCode, res.headers['content-type'], res.headers['content-disposition']], [200, 'text/csv; charset=utf-8', 'attachment; filename="calls.csv"']);
    const [header, row] = res.body.split(/\r?\n/);
    assert.match(header, /^id,/);
    assert.ok(row.startsWith(`${id},`), row);
  });
});

describe('changing calls', () => {
  it('DELETE is 204 with no body, removes the stored recording and keeps the row', async () => {
    const user = await signUp(t);
    const { id, key } = await endedCall(user);
    const res = await t.request({ method: 'DELETE', url: `/v1/calls/${id}`, ...as(user) });
    assert.deepEqual([res.statusCode, res.body], [204, '']);
    assert.equal(await blobs.stat(key), null);
    const kept = (await get(user, `/v1/calls/${id}`)).json();
    assert.deepEqual([kept.status, kept.recording_url, kept.transcript_url], ['completed', null, null]);
  });

  it('DELETE of a call that has no recording clears its transcript: 204', async () => {
    const user = await signUp(t);
    const { id } = await endedCall(user, { recording: 'none' });
    const res = await t.request({ method: 'DELETE', url: `/v1/calls/${id}`, ...as(user) });
    assert.deepEqual([res.statusCode, res.body], [204, '']);
    assert.equal((await get(user, `/v1/calls/${id}/transcript`)).statusCode, 404);
  });

  it('analyze runs extraction again on an ended call: 200 with the call', async () => {
    const user = await signUp(t);
    const { id } = await endedCall(user);
    const res = await t.request({ method: 'POST', url: `/v1/calls/${id}/analyze`, ...as(user) });
    assert.deepEqual([res.statusCode, res.json().id, res.json().status], [200, id, 'completed'], res.body);
  });

  it('an outbound call is 201 queued and its id is the audit row\'s resource; transfer with no body is answered, not a 500', async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    const { worker } = t.modules.calls;
    const nudge = worker.nudge;
    let nudges = 0;
    worker.nudge = () => void nudges++;
    const queuedBefore = await queuedGauge();
    const call = await placeCall(t, user, { agent_id: agent.id, to: '+15550100101' }).finally(() => {
      worker.nudge = nudge;
    });
    assert.equal(call.status, 'queued');
    assert.equal(nudges, 1, 'the dialer is woken');
    assert.equal(await queuedGauge(), queuedBefore + 1, 'the queued calls\' gauge counts it');
    const audit = (await get(user, '/v1/audit-log')).json().data as Array<{ action: string; resource_id: string | null }>;
    assert.deepEqual(
      audit.filter((row) => row.action === 'calls.outbound').map((row) => row.resource_id),
      [call.id],
    );
    const transfer = await t.request({ method: 'POST', url: `/v1/calls/${call.id}/transfer`, ...as(user) });
    assert.deepEqual([transfer.statusCode, transfer.json().code], [409, 'invalid_state']);
    const hangup = await t.request({ method: 'POST', url: `/v1/calls/${call.id}/hangup`, ...as(user) });
    assert.deepEqual([hangup.statusCode, hangup.json().id, hangup.json().status], [200, call.id, 'canceled']);
  });

  it("a sandbox inbound call is 201 ringing or live, and its id is the audit row's resource", async () => {
    const user = await signUp(t);
    const agent = await createCallAgent(t, user);
    await assignSandboxNumber(t, user, agent.id, '+15550142002');
    const res = await t.request({ method: 'POST', url: '/v1/sandbox/inbound-call', ...as(user), payload: { to: '+15550142002', from: '+15550177777' } });
    assert.equal(res.statusCode, 201, res.body);
    const call = res.json();
    assert.deepEqual([call.direction, call.to, call.from], ['inbound', '+15550142002', '+15550177777']);
    const audit = (await get(user, '/v1/audit-log')).json().data as Array<{ action: string; resource_id: string | null }>;
    assert.deepEqual(
      audit.filter((row) => row.action === 'sandbox.inbound_call').map((row) => row.resource_id),
      [call.id],
    );
    await t.request({ method: 'POST', url: `/v1/calls/${call.id}/hangup`, ...as(user) });
    await waitForTerminal(t, user, call.id);
  });
});

describe('the module', () => {
  it("its jobs: the dialer (the calls worker) named calls and the post-call job, started and stopped by the app", () => {
    const { worker, postCall } = t.modules.calls;
    const calls = t.jobs.find((job) => job.name === 'calls');
    const post = t.jobs.find((job) => job.name === 'post-call');
    assert.deepEqual([calls?.start, calls?.stop, post?.start, post?.stop], [worker.start, worker.stop, postCall.start, postCall.stop]);
  });

  it('its runner holds leases as this process: host, pid and a random part', () => {
    const { holder } = t.modules.calls.runner;
    assert.match(holder, /^(.+):(\d+):([0-9a-f]{8})$/);
    assert.ok(holder.startsWith(`${os.hostname()}:${process.pid}:`), holder);
  });
});
