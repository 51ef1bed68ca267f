import assert from 'node:assert/strict';
import { dropSchemaLater } from '../../../test/support/schemas.ts';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, it } from 'node:test';
import pg from 'pg';
import { freePort } from '../../../test/support/ports.ts';
import { decodedMs } from '../../../test/support/recordings.ts';

// Live calls survive the death of their process as terminal rows: a server running three live
// sandbox calls is killed with SIGKILL; a second server on the same data ends each of them, once
// their lease runs out, as failed / media_error / runtime_lost with call.error and call.ended.
// No call is dialed twice (one `ringing` in each history). What the dead process had recorded is
// kept: its complete 10 s raw blocks become the call's recording, then are deleted. Real
// processes, as `npm start` runs them.

const root = path.resolve(import.meta.dirname, '../../..');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-call-crash-'));
const databaseUrl = process.env.TEST_DATABASE_URL;
const schema = `callcrash_${process.pid}_${randomBytes(3).toString('hex')}`;
const children: ChildProcess[] = [];

after(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  fs.rmSync(work, { recursive: true, force: true });
  if (databaseUrl) await dropSchemaLater(databaseUrl, schema);
});

async function environment(): Promise<Record<string, string>> {
  const env: Record<string, string> = {
    DATA_DIR: work,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    ALLOW_PRIVATE_URLS: 'true',
    // Twenty times real time (600 s calls: 30 s of wall) gives a raw block in about a second of
    // wall before the kill; short leases: the test is quick.
    SANDBOX_SPEED: '20',
    CALL_LEASE_SECONDS: '2',
    RATE_LIMIT_IP_PER_MIN: '10000',
    RATE_LIMIT_USER_PER_MIN: '10000',
  };
  if (databaseUrl) {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    await client.query(`CREATE SCHEMA "${schema}"`);
    await client.end();
    const url = new URL(databaseUrl);
    url.searchParams.set('options', `-c search_path=${schema}`);
    env.DATABASE_URL = url.toString();
  }
  return env;
}

async function start(port: number, env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], { cwd: root, env: { ...process.env, ...env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(child);
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  // Up to two minutes: a loaded machine starts a server slowly, which is no failure of the calls.
  for (let i = 0; i < 1200; i++) {
    if (child.exitCode !== null) throw new Error(`server exited: ${stderr}`);
    if (await fetch(`http://127.0.0.1:${port}/v1/health`).then((r) => r.ok, () => false)) return child;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`server did not start: ${stderr}`);
}

async function api(port: number, method: string, url: string, token?: string, body?: unknown) {
  const res = await fetch(`http://127.0.0.1:${port}${url}`, {
    method,
    headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

it('a server killed with live calls: another ends them as runtime_lost, none dialed twice', async () => {
  const env = await environment();
  const port = await freePort();
  const first = await start(port, env);
  const email = `crash-${process.pid}@example.com`;
  assert.equal((await api(port, 'POST', '/v1/auth/register', undefined, { email, password: 'crash test password' })).status, 201);
  const token = (await api(port, 'POST', '/v1/auth/login', undefined, { email, password: 'crash test password' })).body.access_token as string;
  const agent = await api(port, 'POST', '/v1/agents', token, { name: 'Ada', silence_timeout_seconds: 600, max_duration_seconds: 600 });
  assert.equal(agent.status, 201);
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const placed = await api(port, 'POST', '/v1/calls/outbound', token, { agent_id: agent.body.id, to: '+15550100200', simulation: { caller_script: [] } });
    assert.equal(placed.status, 201, JSON.stringify(placed.body));
    ids.push(placed.body.id);
  }
  await until('three live calls', async () => {
    const statuses = await Promise.all(ids.map(async (id) => (await api(port, 'GET', `/v1/calls/${id}`, token)).body.status));
    return statuses.every((s) => s === 'in_progress') ? true : undefined;
  });
  // Each call has written at least its first raw block (both tracks) to DATA_DIR/blobs.
  const raw = path.join(work, 'blobs', 'recordings', 'raw');
  const blockFiles = (id: string) =>
    fs.existsSync(raw) ? fs.readdirSync(raw).flatMap((ws) => (fs.existsSync(path.join(raw, ws, id)) ? fs.readdirSync(path.join(raw, ws, id)) : [])) : [];
  await until('a raw block of every call', async () => (ids.every((id) => ['caller-00000.pcm', 'agent-00000.pcm'].every((f) => blockFiles(id).includes(f))) ? true : undefined));
  first.kill('SIGKILL');
  await new Promise((resolve) => first.once('exit', resolve));

  const second = await start(port, env);
  const ended = await until('every call ended', async () => {
    const calls = await Promise.all(ids.map(async (id) => (await api(port, 'GET', `/v1/calls/${id}`, token)).body));
    return calls.every((c) => c.status === 'failed') ? calls : undefined;
  });
  for (const call of ended) {
    assert.equal(call.end_reason, 'media_error');
    assert.equal(call.error.code, 'runtime_lost');
    assert.ok(call.duration_ms >= 0);
    const history = (await api(port, 'GET', `/v1/calls/${call.id}/events`, token)).body.data.map((e: { status: string }) => e.status);
    assert.deepEqual(history, ['queued', 'ringing', 'in_progress', 'failed'], 'dialed once, ended once');
  }
  // The recording is what the dead process had saved: whole 10 s blocks, then the raw blocks are gone.
  for (const id of ids) {
    const recording = await until('the lost call\'s recording', async () => {
      const res = await fetch(`http://127.0.0.1:${port}/v1/calls/${id}/recording.mp3`, { headers: { authorization: `Bearer ${token}` } });
      return res.status === 200 ? Buffer.from(await res.arrayBuffer()) : undefined;
    });
    const ms = await decodedMs(recording);
    assert.ok(ms >= 10_000 && ms % 10_000 === 0, `the recording is ${ms} ms: whole blocks`);
    assert.deepEqual(blockFiles(id), [], 'the raw blocks were deleted');
  }
  // The terminal state holds: nothing changes it later.
  await new Promise((resolve) => setTimeout(resolve, 2500));
  for (const id of ids) assert.equal((await api(port, 'GET', `/v1/calls/${id}`, token)).body.status, 'failed');
  second.kill('SIGTERM');
  await new Promise((resolve) => second.once('exit', resolve));
});
