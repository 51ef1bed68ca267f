import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, it } from 'node:test';
import { usingPostgres } from './support/database.ts';
import { logFileName } from './support/log-scan.ts';
import { freePort } from './support/ports.ts';

// The real process, as `npm start` runs it: data written before a stop is there after a start.
// On PGlite that is the DATA_DIR on disk; with TEST_DATABASE_URL it is the PostgreSQL database.

const root = path.resolve(import.meta.dirname, '..');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-persist-'));
after(() => fs.rmSync(dataDir, { recursive: true, force: true }));

async function start(port: number): Promise<ChildProcess> {
  // The server's log lines join the suite's, scanned for secrets after the suite (test/log-secrets.check.ts).
  const logDir = process.env.TEST_COVERAGE_DIR;
  const env: Record<string, string> = { ...(process.env as Record<string, string>), PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: logDir ? 'debug' : 'warn' };
  if (usingPostgres()) env.DATABASE_URL = process.env.TEST_DATABASE_URL as string;
  const stdout = logDir ? fs.openSync(path.join(logDir, logFileName(process.pid, `server-${port}`)), 'a') : 'ignore';
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], { cwd: root, env, stdio: ['ignore', stdout, 'pipe'] });
  if (typeof stdout === 'number') fs.closeSync(stdout);
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`server exited: ${stderr}`);
    const ok = await fetch(`http://127.0.0.1:${port}/v1/health`).then((r) => r.ok, () => false);
    if (ok) return child;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`server did not start: ${stderr}`);
}

async function stop(child: ChildProcess) {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

it('keeps data across a stop and a start of the server', async () => {
  const port = await freePort();
  const email = `persist-${process.pid}-${Date.now()}@example.com`;
  const password = 'persisted password';
  const first = await start(port);
  try {
    const registered = await fetch(`http://127.0.0.1:${port}/v1/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });
    assert.equal(registered.status, 201);
  } finally {
    await stop(first);
  }
  const second = await start(port);
  try {
    const login = await fetch(`http://127.0.0.1:${port}/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });
    assert.equal(login.status, 200);
    assert.match(((await login.json()) as { access_token: string }).access_token, /^ey/);
    if (!usingPostgres()) assert.ok(fs.existsSync(path.join(dataDir, 'pglite')), 'PGlite data lives in DATA_DIR/pglite');
  } finally {
    await stop(second);
  }
});
