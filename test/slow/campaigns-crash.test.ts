import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, it } from 'node:test';
import type pg from 'pg';
import { SANDBOX_NUMBERS } from '../../src/providers/telephony/sandbox.ts';
import { freePort } from '../support/ports.ts';
import { type ServerProcess, startApiAndWorker, startServer, until, workerReady } from '../support/processes.ts';
import { createSchema, dropSchemaLater } from '../support/schemas.ts';

// A campaign survives the death of the worker dialing it: an API process and a worker process run
// a 60-contact campaign (concurrency 5, busy numbers retried); the worker is SIGKILLed mid-campaign
// and a new worker started on the same PostgreSQL. The campaign completes; every contact ends
// completed or failed (none lost), and no contact was dialed twice for one attempt: its calls are
// exactly its attempts, numbered 1, 2, … Needs PostgreSQL (TEST_DATABASE_URL): `npm run test:slow`.

const databaseUrl = process.env.TEST_DATABASE_URL;
const schema = `cmpcrash_${process.pid}_${randomBytes(3).toString('hex')}`;
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-campaign-crash-'));
const servers: ServerProcess[] = [];
let direct: pg.Client | undefined;

after(async () => {
  for (const server of servers) if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
  await direct?.end();
  if (databaseUrl) await dropSchemaLater(databaseUrl, schema);
  fs.rmSync(work, { recursive: true, force: true });
});

/** A whole campaign of sandbox calls on a loaded machine. */
const CAMPAIGN_WAIT_MS = 240_000;

/** The deployment's own settings, beside the common ones. */
const SETTINGS = {
  SANDBOX_SPEED: '20',
  // Short leases: the killed worker's live calls are ended soon after.
  CALL_LEASE_SECONDS: '2',
};

it('a worker SIGKILLed mid-campaign: a new worker finishes it, no contact lost, none dialed twice for one attempt', { timeout: 400_000 }, async () => {
  assert.ok(databaseUrl, 'the campaign crash test needs PostgreSQL: set TEST_DATABASE_URL (npm run test:slow)');
  direct = await createSchema(databaseUrl, schema);
  const { apiPort, api, worker1, env } = await startApiAndWorker({ databaseUrl, schema, work, extra: SETTINGS });
  servers.push(api, worker1);

  // biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field.
  const call = async (method: string, route: string, token?: string, body?: unknown, type = 'application/json'): Promise<{ status: number; body: any }> => {
    const res = await fetch(`http://127.0.0.1:${apiPort}${route}`, {
      method,
      headers: { ...(body ? { 'content-type': type } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: res.status, body: res.headers.get('content-type')?.includes('json') ? await res.json() : await res.text() };
  };
  const email = `crash-${process.pid}@example.com`;
  assert.equal((await call('POST', '/v1/auth/register', undefined, { email, password: 'campaign crash password' })).status, 201);
  const token = (await call('POST', '/v1/auth/login', undefined, { email, password: 'campaign crash password' })).body.access_token as string;
  const workspaceId = (await call('GET', '/v1/workspaces', token)).body.data[0].id as string;
  await direct.query('update wallets set balance_micros = 1000000000 where workspace_id = $1', [workspaceId]);
  const agent = (await call('POST', '/v1/agents', token, { name: 'Ada', prompt: 'You remind customers of their booking.', first_message: 'Hi.', max_duration_seconds: 30 })).body;
  const campaign = (await call('POST', '/v1/campaigns', token, { name: 'crash', agent_id: agent.id, concurrency: 5, max_attempts: 2, retry_delay_minutes: 0 })).body;
  const lines = ['phone'];
  for (let i = 0; i < 57; i++) lines.push(`+1555300${String(i).padStart(4, '0')}`);
  lines.push(SANDBOX_NUMBERS.busy, SANDBOX_NUMBERS.noAnswer, SANDBOX_NUMBERS.failsToConnect);
  const upload = await call('POST', `/v1/campaigns/${campaign.id}/upload`, token, `${lines.join('\n')}\n`, 'text/csv');
  assert.equal(upload.status, 200, JSON.stringify(upload.body));
  assert.equal(upload.body.accepted, 60);
  assert.equal((await call('POST', `/v1/campaigns/${campaign.id}/start`, token)).status, 200);

  const count = async (sql: string) => Number((await direct?.query(sql, [campaign.id]))?.rows[0].n);
  // Mid-campaign: some contacts done, calls live under worker1.
  await until('a campaign under way', async () =>
    (await count(`select count(*) as n from campaign_contacts where campaign_id = $1 and status in ('completed', 'failed')`)) >= 8 &&
    (await count(`select count(*) as n from calls where campaign_id = $1 and status in ('ringing', 'in_progress')`)) >= 1
      ? true
      : undefined,
    CAMPAIGN_WAIT_MS,
  );
  const killed = await worker1.stop('SIGKILL');
  assert.equal(killed.signal, 'SIGKILL');
  const doneAtKill = await count(`select count(*) as n from campaign_contacts where campaign_id = $1 and status in ('completed', 'failed')`);
  assert.ok(doneAtKill < 60, 'killed before the end');

  servers.push(await startServer('worker2', env('worker2', 'worker', await freePort()), workerReady));
  const finished = await until('the campaign to complete', async () => {
    const got = await call('GET', `/v1/campaigns/${campaign.id}`, token);
    return got.body.status === 'completed' ? got.body : undefined;
  }, CAMPAIGN_WAIT_MS);
  assert.equal(finished.stats.total, 60);
  assert.equal(finished.stats.completed + finished.stats.failed, 60, 'every contact reached an end');
  assert.equal(finished.stats.pending + finished.stats.in_progress, 0);

  // Calls of each contact = its attempts, numbered 1..n, each call attached to one attempt.
  const contacts = (await direct.query('select id, phone, attempts, status from campaign_contacts where campaign_id = $1', [campaign.id])).rows;
  const attempts = (await direct.query(`select contact_id, attempt, call_id, status from campaign_attempts where campaign_id = $1 and status <> 'canceled' order by attempt`, [campaign.id])).rows;
  const calls = (await direct.query(`select id, to_number, status, error from calls where campaign_id = $1 and status <> 'canceled'`, [campaign.id])).rows;
  assert.equal(calls.filter((c) => c.status === 'ringing' || c.status === 'in_progress' || c.status === 'queued').length, 0, 'no call left live');
  assert.equal(new Set(attempts.map((a) => a.call_id)).size, calls.length, 'every call is one attempt');
  for (const contact of contacts) {
    const mine = attempts.filter((a) => a.contact_id === contact.id);
    assert.ok(contact.attempts >= 1, `${contact.phone} was dialed`);
    assert.deepEqual(mine.map((a) => a.attempt), Array.from({ length: contact.attempts }, (_, i) => i + 1), `${contact.phone}: one call per attempt`);
    assert.equal(calls.filter((c) => c.to_number === contact.phone).length, contact.attempts, `${contact.phone}: calls placed = attempts`);
  }
  const busy = contacts.find((c) => c.phone === SANDBOX_NUMBERS.busy);
  assert.deepEqual([busy?.status, busy?.attempts], ['failed', 2]);
  const lost = calls.filter((c) => c.error?.code === 'runtime_lost');
  assert.ok(lost.length >= 1, 'the killed worker had live calls, ended as runtime_lost by the new one');
});
