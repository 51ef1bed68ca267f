import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { STARTUP_LOG_MESSAGE } from '../src/platform/startup-phases.ts';
import { logFileName } from './support/log-scan.ts';
import { freePort } from './support/ports.ts';

// The real process (`npm start`) on a fresh DATA_DIR: what it answers from the moment it accepts
// connections (part of the start-up runs after listening: the workers, the OpenAPI document, the
// media writer and probe), and the debug line with each start-up phase's duration.

const root = path.resolve(import.meta.dirname, '..');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-startup-'));
let server: ChildProcess | undefined;
let output = '';
let port = 0;
const early: Record<string, { status: number; body: Record<string, unknown> }> = {};

/** True once a TCP connection to the port is accepted (no HTTP request sent). */
const accepts = (p: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(p, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

async function call(method: string, url: string, body?: unknown) {
  const response = await fetch(`http://127.0.0.1:${port}${url}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('start-up of the server process', () => {
  before(async () => {
    port = await freePort();
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      PUBLIC_BASE_URL: 'http://localhost:3000',
      LOG_LEVEL: 'debug',
      LOG_FORMAT: 'json',
    };
    delete env.DATABASE_URL;
    delete env.REDIS_URL;
    server = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    server.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    server.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    // A loaded machine starts a server slowly (see test/readme-quickstart.test.ts).
    const deadline = Date.now() + 120_000;
    while (!(await accepts(port))) {
      assert.ok(server.exitCode === null, `the server exited: ${output.slice(-2000)}`);
      assert.ok(Date.now() < deadline, `the server did not listen within 120 s: ${output.slice(-2000)}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    // The first requests, sent together the moment the port accepts connections.
    const [openapi, registered, refused, demo, health] = await Promise.all([
      call('GET', '/openapi.json'),
      call('POST', '/v1/auth/register', { email: `startup-${process.pid}@example.com`, password: 'a long enough password' }),
      call('POST', '/v1/auth/register', { email: 'not an email', password: 'a long enough password' }),
      call('POST', '/v1/demo/chat', { message: 'What can this platform do?' }),
      call('GET', '/v1/health'),
    ]);
    Object.assign(early, { openapi, registered, refused, demo, health });
    const until = Date.now() + 60_000;
    while (!output.includes(STARTUP_LOG_MESSAGE) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
  });

  after(async () => {
    if (server && server.exitCode === null) {
      const exited = new Promise((resolve) => server?.once('exit', resolve));
      server.kill('SIGTERM');
      await exited;
    }
    // The server's log lines join the suite's, scanned for secrets after the suite (test/log-secrets.check.ts).
    const logDir = process.env.TEST_COVERAGE_DIR;
    if (logDir) fs.writeFileSync(path.join(logDir, logFileName(process.pid, `server-${port}`)), output.split('\n').filter((line) => line.startsWith('{')).join('\n'));
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('serves the whole OpenAPI document to the first request after listening', () => {
    assert.equal(early.openapi.status, 200);
    const committed = JSON.parse(fs.readFileSync(path.join(root, 'openapi.json'), 'utf8'));
    assert.deepEqual(early.openapi.body, committed);
  });

  it('answers a write, a validation error, the demo and the health check from the first moment', () => {
    assert.equal(early.registered.status, 201, JSON.stringify(early.registered.body));
    assert.equal(early.registered.body.email, `startup-${process.pid}@example.com`);
    assert.equal(early.refused.status, 422, JSON.stringify(early.refused.body));
    assert.equal(early.refused.body.code, 'validation_failed');
    assert.deepEqual(
      (early.refused.body.errors as Array<{ path: string }>).map((e) => e.path),
      ['email'],
    );
    assert.equal(early.demo.status, 200, JSON.stringify(early.demo.body));
    assert.equal(typeof early.demo.body.reply, 'string');
    assert.ok((early.demo.body.reply as string).length > 0);
    assert.equal(early.health.status, 200, JSON.stringify(early.health.body));
    assert.equal(early.health.body.status, 'ok');
  });

  it('logs the duration of every start-up phase in one line at debug', () => {
    const line = output.split('\n').find((l) => l.includes(STARTUP_LOG_MESSAGE));
    assert.ok(line, `no "${STARTUP_LOG_MESSAGE}" line: ${output.slice(-2000)}`);
    const entry = JSON.parse(line) as { level: number; phases: Record<string, number>; listening_ms: number };
    assert.equal(entry.level, 20, 'at debug');
    const expected = ['modules', 'database_open', 'migrations', 'jwt_secret', 'platform', 'plugins', 'routes', 'ready', 'listen', 'openapi', 'workers', 'media_writer', 'media_probe'];
    assert.deepEqual(Object.keys(entry.phases).sort(), [...expected].sort());
    for (const name of expected) assert.ok(Number.isFinite(entry.phases[name]) && entry.phases[name] >= 0, `${name}: ${entry.phases[name]}`);
    // The phases up to listening are consecutive: together they are the time to listen.
    const upToListen = ['modules', 'database_open', 'migrations', 'jwt_secret', 'platform', 'plugins', 'routes', 'ready', 'listen'].reduce((sum, name) => sum + entry.phases[name], 0);
    assert.ok(Math.abs(upToListen - entry.listening_ms) < 1, `${upToListen} vs ${entry.listening_ms}`);
    // A fresh DATA_DIR: the embedded database was created and migrated, which takes a while.
    assert.ok(entry.phases.migrations > 0 && entry.phases.database_open > 0);
  });
});
