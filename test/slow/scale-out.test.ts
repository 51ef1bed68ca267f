import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { startReceiver } from '../../src/modules/webhooks/test-receiver.ts';
import { freePort } from '../support/ports.ts';
import { healthy, type ServerProcess, startServer, startTcpProxy, type TcpProxy, until } from '../support/processes.ts';
import { createSchema, dropSchemaLater, urlInSchema } from '../support/schemas.ts';

// Scale-out proof (issue 19): two ROLE=api and two ROLE=worker processes, as `npm start` runs them,
// on one PostgreSQL schema and one Redis, reached through TCP proxies the test can cut. Rate limits
// are shared, each webhook attempt is sent once, calls run once each within the workspace's limit
// held across workers, recordings (BLOB_STORE=postgres) read from either API instance; Redis down:
// requests still served, a warning logged; PostgreSQL dropped under load: served again once it is
// back, without a restart; SIGTERM: every process drains and exits within 10 s.
// Needs PostgreSQL (TEST_DATABASE_URL) and Redis (TEST_REDIS_URL, default the local one): `npm run test:slow`.

const databaseUrl = process.env.TEST_DATABASE_URL;
const redisUrl = new URL(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379');
const schema = `scale_${process.pid}_${randomBytes(3).toString('hex')}`;
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-scale-'));
const servers: ServerProcess[] = [];
const proxies: TcpProxy[] = [];
let direct: pg.Client;
let apiPorts: number[] = [];
let api: ServerProcess[] = [];
let pgProxy: TcpProxy;
let redisProxy: TcpProxy;
const receivers: Array<{ close(): Promise<void> }> = [];

async function request(port: number, method: string, url: string, token?: string, body?: unknown) {
  const res = await fetch(`http://127.0.0.1:${port}${url}`, {
    method,
    headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(15_000),
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  const json = res.headers.get('content-type')?.includes('json') && bytes.length > 0 ? JSON.parse(bytes.toString()) : null;
  return { status: res.status, body: json, bytes, headers: res.headers };
}


let users = 0;
/** A new user with a workspace, registered and logged in through the first API instance. */
async function newUser() {
  const email = `scale-${process.pid}-${users++}@example.com`;
  const registered = await request(apiPorts[0], 'POST', '/v1/auth/register', undefined, { email, password: 'scale-out password' });
  assert.equal(registered.status, 201, JSON.stringify(registered.body));
  const login = await request(apiPorts[1], 'POST', '/v1/auth/login', undefined, { email, password: 'scale-out password' });
  assert.equal(login.status, 200);
  const token = login.body.access_token as string;
  const workspaces = await request(apiPorts[0], 'GET', '/v1/workspaces', token);
  return { token, workspaceId: workspaces.body.data[0].id as string };
}

before(async () => {
  assert.ok(databaseUrl, 'the scale-out test needs PostgreSQL: set TEST_DATABASE_URL (npm run test:slow)');
  direct = await createSchema(databaseUrl, schema);
  const target = new URL(databaseUrl);
  pgProxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  redisProxy = await startTcpProxy({ host: redisUrl.hostname, port: Number(redisUrl.port || 6379) });
  proxies.push(pgProxy, redisProxy);
  const viaProxy = new URL(databaseUrl);
  viaProxy.host = `127.0.0.1:${pgProxy.port}`;
  const redisViaProxy = new URL(redisUrl);
  redisViaProxy.host = `127.0.0.1:${redisProxy.port}`;
  const common = {
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    DATABASE_URL: urlInSchema(viaProxy, schema),
    REDIS_URL: redisViaProxy.toString(),
    JWT_SECRET: randomBytes(24).toString('hex'),
    BLOB_STORE: 'postgres',
    ALLOW_PRIVATE_URLS: 'true',
    SANDBOX_SPEED: '20',
    RATE_LIMIT_USER_PER_MIN: '100',
    RATE_LIMIT_IP_PER_MIN: '1000',
  };
  const env = (name: string, role: string, port: number) => ({ ...common, ROLE: role, PORT: String(port), DATA_DIR: path.join(work, name) });
  apiPorts = [await freePort(), await freePort()];
  // The first process migrates the schema; the others start on the migrated one.
  const api1 = await startServer('api1', env('api1', 'api', apiPorts[0]), healthy(apiPorts[0]));
  servers.push(api1);
  const workerReady = (output: string) => output.includes('worker role: HTTP API not served');
  const rest = await Promise.all([
    startServer('api2', env('api2', 'api', apiPorts[1]), healthy(apiPorts[1])),
    startServer('worker1', env('worker1', 'worker', await freePort()), workerReady),
    startServer('worker2', env('worker2', 'worker', await freePort()), workerReady),
  ]);
  servers.push(...rest);
  api = [api1, rest[0]];
});

after(async () => {
  for (const server of servers) if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
  for (const receiver of receivers) await receiver.close();
  for (const proxy of proxies) await proxy.close();
  await direct?.end();
  if (databaseUrl) await dropSchemaLater(databaseUrl, schema);
  fs.rmSync(work, { recursive: true, force: true });
});

describe('two API and two worker processes on one PostgreSQL and one Redis', { timeout: 300_000 }, () => {
  it('shares rate limits: a user has 100 requests a minute across both API instances, not 100 on each', async () => {
    const user = await newUser();
    const served = [0, 0];
    let refusedAt = -1;
    for (let i = 0; i < 130 && refusedAt < 0; i++) {
      const res = await request(apiPorts[i % 2], 'GET', '/v1/auth/me', user.token);
      if (res.status === 200) served[i % 2]++;
      else {
        assert.equal(res.status, 429);
        refusedAt = i;
      }
    }
    assert.ok(refusedAt > 0, 'the limit was reached');
    const total = served[0] + served[1];
    assert.ok(total <= 100 && total >= 95, `served ${total} before the first 429`);
    assert.ok(served[0] >= 45 && served[1] >= 45, 'both instances served');
    const other = await request(apiPorts[(refusedAt + 1) % 2], 'GET', '/v1/auth/me', user.token);
    assert.equal(other.status, 429, 'the other instance refuses too');
  });

  it('sends each webhook attempt once, whichever worker claims it', async () => {
    const user = await newUser();
    const receiver = await startReceiver();
    receivers.push(receiver);
    const put = await request(apiPorts[0], 'PUT', '/v1/webhooks', user.token, { webhook_url: receiver.url });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    const events = 30;
    for (let i = 0; i < events; i++) assert.equal((await request(apiPorts[i % 2], 'POST', '/v1/webhooks/test', user.token)).status, 202);
    await until('every test event delivered', async () => (new Set(receiver.received.map((r) => r.headers['webhook-id'])).size >= events ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const ids = receiver.received.map((r) => String(r.headers['webhook-id']));
    assert.equal(ids.length, events, 'no attempt sent twice');
    assert.equal(new Set(ids).size, events);
  });

  const callIds: string[] = [];
  let callsUser: { token: string; workspaceId: string };

  it("runs each call once, the workspace's live-call limit held across both workers", async () => {
    callsUser = await newUser();
    const patched = await request(apiPorts[0], 'PATCH', `/v1/workspaces/${callsUser.workspaceId}`, callsUser.token, { settings: { max_concurrent_calls: 2 } });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const agent = await request(apiPorts[1], 'POST', '/v1/agents', callsUser.token, { name: 'Ada' });
    assert.equal(agent.status, 201);
    for (let i = 0; i < 8; i++) {
      const placed = await request(apiPorts[i % 2], 'POST', '/v1/calls/outbound', callsUser.token, {
        agent_id: agent.body.id,
        to: '+15550100200',
        simulation: { caller_script: ['Hi, are you open today?', 'Thanks, bye.'] },
      });
      assert.equal(placed.status, 201, JSON.stringify(placed.body));
      callIds.push(placed.body.id);
    }
    let maxLive = 0;
    await until(
      'every call ended',
      async () => {
        const rows = await direct.query<{ status: string }>('select status from calls where workspace_id = $1', [callsUser.workspaceId]);
        const live = rows.rows.filter((r) => r.status === 'ringing' || r.status === 'in_progress').length;
        maxLive = Math.max(maxLive, live);
        return rows.rows.every((r) => !['queued', 'ringing', 'in_progress'].includes(r.status)) ? true : undefined;
      },
      120_000,
    );
    assert.ok(maxLive >= 1 && maxLive <= 2, `at most 2 live calls at once (saw ${maxLive})`);
    for (const id of callIds) {
      const call = await request(apiPorts[0], 'GET', `/v1/calls/${id}`, callsUser.token);
      assert.equal(call.body.status, 'completed', JSON.stringify(call.body));
      const history = (await request(apiPorts[1], 'GET', `/v1/calls/${id}/events`, callsUser.token)).body.data.map((e: { status: string }) => e.status);
      assert.equal(history.filter((s: string) => s === 'ringing').length, 1, `dialed once: ${history}`);
    }
  });

  it("holds a campaign's concurrency across both workers and dials each contact once", async () => {
    const user = await newUser();
    const agent = await request(apiPorts[0], 'POST', '/v1/agents', user.token, { name: 'Grace' });
    const campaign = await request(apiPorts[1], 'POST', '/v1/campaigns', user.token, {
      name: 'Scale-out',
      agent_id: agent.body.id,
      concurrency: 2,
      simulation: { caller_script: ['Hello?', 'Thanks, bye.'] },
    });
    assert.equal(campaign.status, 201, JSON.stringify(campaign.body));
    const csv = ['phone,name', ...Array.from({ length: 10 }, (_, i) => `+155501002${String(10 + i)},Contact ${i}`)].join('\n');
    const upload = await fetch(`http://127.0.0.1:${apiPorts[0]}/v1/campaigns/${campaign.body.id}/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.token}`, 'content-type': 'text/csv' },
      body: csv,
    });
    assert.equal(upload.status, 200, await upload.clone().text());
    assert.equal(((await upload.json()) as { accepted: number }).accepted, 10);
    assert.equal((await request(apiPorts[1], 'POST', `/v1/campaigns/${campaign.body.id}/start`, user.token)).status, 200);
    let maxLive = 0;
    await until(
      'the campaign completed',
      async () => {
        const live = await direct.query<{ n: string }>("select count(*) as n from calls where campaign_id = $1 and status in ('ringing', 'in_progress')", [campaign.body.id]);
        maxLive = Math.max(maxLive, Number(live.rows[0].n));
        const got = await request(apiPorts[0], 'GET', `/v1/campaigns/${campaign.body.id}`, user.token);
        return got.body.status === 'completed' ? got.body : undefined;
      },
      120_000,
    );
    assert.ok(maxLive >= 1 && maxLive <= 2, `at most 2 live calls of the campaign at once (saw ${maxLive})`);
    const perContact = await direct.query<{ to_number: string; n: string }>('select to_number, count(*) as n from calls where campaign_id = $1 group by to_number', [campaign.body.id]);
    assert.equal(perContact.rows.length, 10, 'every contact was called');
    assert.ok(perContact.rows.every((r) => r.n === '1'), `each contact dialed once: ${JSON.stringify(perContact.rows)}`);
  });

  it('fires a schedule once, whichever worker sees it first', async () => {
    const user = await newUser();
    const agent = await request(apiPorts[0], 'POST', '/v1/agents', user.token, { name: 'Alan' });
    const scheduledAt = new Date(Date.now() + 1500).toISOString();
    const created = await request(apiPorts[1], 'POST', '/v1/schedules', user.token, { agent_id: agent.body.id, to: '+15550100230', scheduled_at: scheduledAt });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const fired = await until('the schedule fired', async () => {
      const got = await request(apiPorts[0], 'GET', `/v1/schedules/${created.body.id}`, user.token);
      return got.body.status === 'scheduled' ? undefined : got.body;
    });
    assert.equal(fired.status, 'dispatched', JSON.stringify(fired));
    const calls = await direct.query<{ id: string }>('select id from calls where schedule_id = $1', [created.body.id]);
    assert.deepEqual(calls.rows.map((r) => r.id), [fired.call_id], 'one call, the one the schedule names');
  });

  it('serves a recording from either API instance (BLOB_STORE=postgres)', async () => {
    // Made by a worker's post-call job just after the call: 409 recording_not_ready until then.
    await until('the recording', async () => ((await request(apiPorts[0], 'GET', `/v1/calls/${callIds[0]}`, callsUser.token)).body.recording_status === 'ready' ? true : undefined), 60_000);
    const [first, second] = await Promise.all(apiPorts.map((port) => request(port, 'GET', `/v1/calls/${callIds[0]}/recording.mp3`, callsUser.token)));
    assert.equal(first.status, 200);
    assert.equal(second.status, 200);
    assert.equal(first.headers.get('content-type'), 'audio/mpeg');
    assert.ok(first.bytes.length > 1000);
    assert.deepEqual(second.bytes, first.bytes);
  });

  it('Redis down: requests are still served, each instance logs a warning; limits are shared again once it is back', async () => {
    const user = await newUser();
    await redisProxy.cut();
    for (let i = 0; i < 10; i++) assert.equal((await request(apiPorts[i % 2], 'GET', '/v1/auth/me', user.token)).status, 200);
    for (const server of api) await until(`${server.name} warns`, async () => (server.output().includes('Redis is unreachable') ? true : undefined), 15_000);
    await redisProxy.restore();
    for (const server of api) await until(`${server.name} sees Redis back`, async () => (server.output().includes('Redis is back') ? true : undefined), 30_000);
    assert.equal((await request(apiPorts[0], 'GET', '/v1/auth/me', user.token)).status, 200);
  });

  it('PostgreSQL dropped under load: served again once it is back, workers deliver again, no process restarted', async () => {
    const user = await newUser();
    const receiver = await startReceiver();
    receivers.push(receiver);
    assert.equal((await request(apiPorts[0], 'PUT', '/v1/webhooks', user.token, { webhook_url: receiver.url })).status, 200);
    await pgProxy.cut();
    const during = [];
    for (let i = 0; i < 10; i++) {
      during.push((await request(apiPorts[i % 2], 'GET', '/v1/auth/me', user.token)).status);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.ok(during.every((status) => status >= 500), `refused while the database is away: ${during}`);
    await pgProxy.restore();
    for (const port of apiPorts) await until(`API on ${port} served again`, async () => ((await request(port, 'GET', '/v1/auth/me', user.token)).status === 200 ? true : undefined), 30_000);
    assert.equal((await request(apiPorts[1], 'POST', '/v1/webhooks/test', user.token)).status, 202);
    await until('a webhook delivered after the outage', async () => (receiver.received.length >= 1 ? true : undefined), 30_000);
    for (const server of servers) assert.equal(server.child.exitCode, null, `${server.name} still running: ${server.output().slice(-3000)}`);
  });

  it('SIGTERM: every process drains and exits within 10 s', async () => {
    const stopped = await Promise.all(servers.map((server) => server.stop('SIGTERM')));
    for (const [i, result] of stopped.entries()) {
      assert.equal(result.code, 0, `${servers[i].name} exit code (output: ${servers[i].output().slice(-2000)})`);
      assert.ok(result.ms < 10_000, `${servers[i].name} took ${result.ms} ms`);
    }
  });
});
