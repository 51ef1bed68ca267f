import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, it } from 'node:test';
import type pg from 'pg';
import { startReceiver } from '../../src/modules/webhooks/test-receiver.ts';
import { freePort } from '../support/ports.ts';
import { type ServerProcess, startApiAndWorker, startServer, until, workerReady } from '../support/processes.ts';
import { createSchema, dropSchemaLater } from '../support/schemas.ts';

// After the call survives the death of its worker (DESIGN part 9): an API process and a worker
// process run three long sandbox calls; once they have ended, the worker is SIGKILLed while it
// encodes their recordings (a post-call attempt holds a lease, the MP3 not stored yet). A new
// worker on the same PostgreSQL claims them again when the leases run out: every recording is
// stored, every raw track deleted, and each call's call.ended reaches the agent's webhook as one
// event. Needs PostgreSQL (TEST_DATABASE_URL): `npm run test:slow`.

const databaseUrl = process.env.TEST_DATABASE_URL;
const schema = `postcall_${process.pid}_${randomBytes(3).toString('hex')}`;
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-post-call-crash-'));
const servers: ServerProcess[] = [];
const receiver = await startReceiver();
let direct: pg.Client | undefined;

after(async () => {
  for (const server of servers) if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
  await direct?.end();
  await receiver.close();
  if (databaseUrl) await dropSchemaLater(databaseUrl, schema);
  fs.rmSync(work, { recursive: true, force: true });
});

/** The deployment's own settings, beside the common ones. */
const SETTINGS = {
  SANDBOX_SPEED: '40',
  // Short leases: the killed worker's post-call attempts are taken over soon after.
  POST_CALL_LEASE_SECONDS: '3',
};

it('a worker SIGKILLed while encoding recordings: after a restart each recording is stored and each call.ended sent once', { timeout: 400_000 }, async () => {
  assert.ok(databaseUrl, 'the post-call crash test needs PostgreSQL: set TEST_DATABASE_URL (npm run test:slow)');
  const db = await createSchema(databaseUrl, schema);
  direct = db;
  const { apiPort, api, worker1, env } = await startApiAndWorker({ databaseUrl, schema, work, extra: SETTINGS });
  servers.push(api, worker1);

  // biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field.
  const call = async (method: string, route: string, token?: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const res = await fetch(`http://127.0.0.1:${apiPort}${route}`, {
      method,
      headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: await res.json().catch(() => null) };
  };
  const email = `post-call-${process.pid}@example.com`;
  assert.equal((await call('POST', '/v1/auth/register', undefined, { email, password: 'post call crash password' })).status, 201);
  const token = (await call('POST', '/v1/auth/login', undefined, { email, password: 'post call crash password' })).body.access_token as string;
  const workspaceId = (await call('GET', '/v1/workspaces', token)).body.data[0].id as string;
  await db.query('update wallets set balance_micros = 1000000000 where workspace_id = $1', [workspaceId]);
  // Calls of four simulated minutes (the callee stays silent until max_duration): their MP3s take seconds to encode.
  const agent = (
    await call('POST', '/v1/agents', token, { name: 'Ada', first_message: 'Hi.', max_duration_seconds: 240, silence_timeout_seconds: 600, webhook_url: receiver.url, webhook_events: ['call.ended'] })
  ).body;
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const placed = await call('POST', '/v1/calls/outbound', token, { agent_id: agent.id, to: '+15550100200', simulation: { caller_script: [] } });
    assert.equal(placed.status, 201, JSON.stringify(placed.body));
    ids.push(placed.body.id);
  }

  // Every call ended, and a post-call attempt of worker1 holds a lease with the MP3 not stored yet.
  const rows = async () => (await db.query('select * from calls where id = any($1)', [ids])).rows;
  const atKill = await until('worker1 encoding the recordings of its ended calls', async () => {
    const now = await rows();
    const ended = now.every((r) => !['queued', 'ringing', 'in_progress'].includes(r.status));
    const encoding = now.filter((r) => r.recording_status === 'pending' && r.post_call_lease_holder !== null && r.post_call_lease_expires_at > new Date());
    return ended && encoding.length > 0 ? now : undefined;
  }, 240_000);
  const killed = await worker1.stop('SIGKILL');
  assert.equal(killed.signal, 'SIGKILL');
  assert.ok(atKill.every((r) => r.status === 'completed' && r.end_reason === 'max_duration'), 'the calls ended on their own, before the kill');

  servers.push(await startServer('worker2', env('worker2', 'worker', await freePort()), workerReady));
  const done = await until('every recording stored and call.ended emitted', async () => {
    const now = await rows();
    return now.every((r) => r.ended_event_at !== null) ? now : undefined;
  }, 240_000);
  for (const row of done) {
    assert.equal(row.recording_status, 'ready', `${row.id}: ${row.recording_error}`);
    assert.equal(row.analysis_status, 'ready');
    const blob = await db.query('select size from blobs where key = $1', [row.recording_key]);
    assert.equal(blob.rows.length, 1, `${row.id}: the MP3 is stored`);
    const raw = await db.query('select count(*)::integer as n from blobs where key like $1', [`recordings/raw/${workspaceId}/${row.id}/%`]);
    assert.equal(raw.rows[0].n, 0, `${row.id}: the raw tracks are deleted`);
    const events = await db.query(`select id from webhook_events where call_id = $1 and type = 'call.ended'`, [row.id]);
    assert.equal(events.rows.length, 1, `${row.id}: call.ended emitted once`);
  }
  assert.ok(done.some((r) => r.post_call_attempts >= 2), 'a recording was taken over from the killed worker');

  // Each call's call.ended reaches the webhook, as one event (a delivery retried keeps its id).
  await until('the call.ended deliveries', async () => {
    const delivered = new Set(receiver.received.map((r) => JSON.parse(r.body)).filter((b) => b.type === 'call.ended').map((b) => b.call_id));
    return ids.every((id) => delivered.has(id)) ? true : undefined;
  }, 120_000);
  for (const id of ids) {
    const mine = receiver.received.filter((r) => JSON.parse(r.body).call_id === id && JSON.parse(r.body).type === 'call.ended');
    assert.equal(new Set(mine.map((r) => r.headers['webhook-id'])).size, 1, `${id}: one call.ended event`);
    assert.match(JSON.parse(mine[0].body).data.recording_url, /\/recording\.mp3\?expires=/);
  }
});
