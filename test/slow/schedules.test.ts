import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { freePort } from '../support/ports.ts';
import { healthy, type ServerProcess, startServer, until } from '../support/processes.ts';
import { createSchema, dropSchemaLater, urlInSchema } from '../support/schemas.ts';

// Schedules fire exactly once with several workers (issue 17): one ROLE=api and two ROLE=worker
// processes, as `npm start` runs them, on one PostgreSQL schema. Schedules created through the API
// and due within the same few seconds (many at the same instant) are each dispatched once, with
// exactly one call carrying the schedule's id; `run` requests racing the workers at the due time
// change nothing: each schedule still has one call. A worker started after schedules fell due
// fires them, late. Needs PostgreSQL (TEST_DATABASE_URL): `npm run test:slow`.

const databaseUrl = process.env.TEST_DATABASE_URL;
const schema = `sched_${process.pid}_${randomBytes(3).toString('hex')}`;
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-sched-'));
const servers: ServerProcess[] = [];
let direct: pg.Client;
let apiPort = 0;
let env: (name: string, role: string, port: number) => Record<string, string>;

async function request(method: string, url: string, token?: string, body?: unknown) {
  const res = await fetch(`http://127.0.0.1:${apiPort}${url}`, {
    method,
    headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}


async function newUser() {
  const email = `sched-${process.pid}-${randomBytes(3).toString('hex')}@example.com`;
  const registered = await request('POST', '/v1/auth/register', undefined, { email, password: 'schedules password' });
  assert.equal(registered.status, 201, JSON.stringify(registered.body));
  const login = await request('POST', '/v1/auth/login', undefined, { email, password: 'schedules password' });
  const token = login.body.access_token as string;
  const agent = await request('POST', '/v1/agents', token, { name: 'Ada', prompt: 'You are Ada.', first_message: 'Hello from Ada.' });
  assert.equal(agent.status, 201, JSON.stringify(agent.body));
  return { token, agentId: agent.body.id as string };
}

/** Creates `count` schedules due at `at` (ISO), through the API, a few at a time. */
async function createSchedules(user: { token: string; agentId: string }, count: number, at: (i: number) => string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 10) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(10, count - i) }, (_, k) =>
        request('POST', '/v1/schedules', user.token, { agent_id: user.agentId, to: `+1555010${String(1000 + ((i + k) % 9000)).padStart(4, '0')}`, scheduled_at: at(i + k), variables: { n: String(i + k) } }),
      ),
    );
    for (const res of batch) {
      assert.equal(res.status, 201, JSON.stringify(res.body));
      ids.push(res.body.id);
    }
  }
  return ids;
}

/** Every schedule's status and how many calls carry its id. */
async function outcome(ids: string[]) {
  const rows = await direct.query<{ id: string; status: string; late: boolean; call_id: string | null; calls: number; variables: { n: string } }>(
    `select s.id, s.status, s.late, s.call_id, s.variables, (select count(*)::int from calls c where c.schedule_id = s.id) as calls from schedules s where s.id = any($1)`,
    [ids],
  );
  return rows.rows;
}

before(async () => {
  assert.ok(databaseUrl, 'the schedules multi-process test needs PostgreSQL: set TEST_DATABASE_URL (npm run test:slow)');
  direct = await createSchema(databaseUrl, schema);
  const common = {
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    DATABASE_URL: urlInSchema(databaseUrl, schema),
    JWT_SECRET: randomBytes(24).toString('hex'),
    ALLOW_PRIVATE_URLS: 'true',
    SIGNUP_CREDIT_USD: '1000',
    RATE_LIMIT_USER_PER_MIN: '100000',
    RATE_LIMIT_IP_PER_MIN: '100000',
  };
  env = (name, role, port) => ({ ...common, ROLE: role, PORT: String(port), DATA_DIR: path.join(work, name) });
  apiPort = await freePort();
  servers.push(await startServer('api', env('api', 'api', apiPort), healthy(apiPort)));
});

after(async () => {
  for (const server of servers) if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
  await direct?.end();
  if (databaseUrl) await dropSchemaLater(databaseUrl, schema);
  fs.rmSync(work, { recursive: true, force: true });
});

const workerReady = (output: string) => output.includes('worker role: HTTP API not served');

describe('schedules with two worker processes on one PostgreSQL', { timeout: 300_000 }, () => {
  it('a worker started after schedules fell due fires them at start-up, late', async () => {
    const user = await newUser();
    // No worker runs yet: these fall due with nobody to fire them.
    const ids = await createSchedules(user, 5, () => new Date(Date.now() + 1000).toISOString());
    await new Promise((resolve) => setTimeout(resolve, 7000));
    assert.ok((await outcome(ids)).every((r) => r.status === 'scheduled'));
    servers.push(await startServer('worker1', env('worker1', 'worker', await freePort()), workerReady));
    const rows = await until('the overdue schedules to fire', async () => {
      const now = await outcome(ids);
      return now.every((r) => r.status !== 'scheduled') ? now : undefined;
    });
    for (const row of rows) {
      assert.equal(row.status, 'dispatched');
      assert.equal(row.late, true);
      assert.equal(row.calls, 1);
    }
  });

  it('each schedule is dispatched once, with one call, while two workers and run requests race for it', async () => {
    servers.push(await startServer('worker2', env('worker2', 'worker', await freePort()), workerReady));
    const user = await newUser();
    const start = Date.now() + 30_000;
    // 200 due at the same instant, 100 more spread over the next two seconds.
    const created = Date.now();
    const ids = await createSchedules(user, 300, (i) => new Date(i < 200 ? start : start + (i - 200) * 20).toISOString());
    console.log(`300 schedules created in ${Date.now() - created} ms`);
    assert.ok(Date.now() < start, 'the schedules were created before they fell due');
    // Run requests for 30 of them, sent at the due time, race the workers.
    while (Date.now() < start) await new Promise((resolve) => setTimeout(resolve, 5));
    const runs = await Promise.all(ids.slice(0, 30).map((id) => request('POST', `/v1/schedules/${id}/run`, user.token)));
    for (const run of runs) {
      assert.ok(run.status === 200 || run.status === 409, JSON.stringify(run.body));
      if (run.status === 409) assert.equal(run.body.code, 'invalid_state');
      else assert.equal(run.body.status, 'dispatched');
    }
    const rows = await until('every schedule to fire', async () => {
      const now = await outcome(ids);
      return now.every((r) => r.status !== 'scheduled') ? now : undefined;
    });
    for (const row of rows) {
      assert.equal(row.status, 'dispatched', JSON.stringify(row));
      assert.equal(row.calls, 1, `schedule ${row.id} has ${row.calls} calls`);
    }
    const calls = await direct.query<{ schedule_id: string; variables: { n: string } }>('select schedule_id, variables from calls where schedule_id = any($1)', [ids]);
    assert.equal(calls.rows.length, ids.length);
    const byId = new Map(rows.map((r) => [r.id, r.variables.n]));
    for (const call of calls.rows) assert.equal(call.variables.n, byId.get(call.schedule_id));
    // Both workers ran all along. Which one fired a batch is not recorded anywhere (a batch is up to
    // 100, so one worker may fire most of them, and the calls dialer of the worker that fired them
    // is woken first); the once-only guarantee is the claim statement's, checked above by the count.
    for (const server of servers) assert.equal(server.child.exitCode, null, `${server.name} still running`);
  });
});
