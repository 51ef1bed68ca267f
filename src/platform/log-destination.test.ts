import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { LOG_BATCH_BYTES } from './logging.ts';

// The server's log lines are gathered into batches (logDestination in platform/logging.ts): none
// may be lost or held back. Each case runs a process that logs through it to its stdout, as the
// server does, with a file as that stdout.

const root = path.resolve(import.meta.dirname, '../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-log-destination-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));
const children: ChildProcess[] = [];
after(() => {
  for (const child of children) child.kill('SIGKILL');
});

/** A process logging `lines` lines of `bytes` characters each to its stdout, `file`, then doing what `then` says. */
function logger(file: string, lines: number, bytes: number, then: 'stay' | 'exit' | 'return' | 'throw') {
  const script = `
    import { createLogger, logDestination } from './src/platform/logging.ts';
    const log = createLogger({ level: 'info', destination: logDestination() });
    for (let i = 0; i < ${lines}; i++) log.info({ n: i, pad: 'x'.repeat(${bytes}) }, 'line');
    ${then === 'stay' ? 'setInterval(() => {}, 1000);' : then === 'exit' ? 'process.exit(0);' : then === 'throw' ? "setImmediate(() => { throw new Error('boom'); });" : ''}
  `;
  const stdout = fs.openSync(file, 'w');
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, stdio: ['ignore', stdout, 'ignore'] });
  fs.closeSync(stdout);
  children.push(child);
  return child;
}

const written = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { n: number }) : []);
const ended = (child: ChildProcess) => new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

/** Waits (at most `boundMs`) for `file` to hold `count` lines. */
async function linesIn(file: string, count: number, boundMs: number) {
  const until = Date.now() + boundMs;
  while (written(file).length < count && Date.now() < until) await sleep(50);
  return written(file);
}

describe('log destination (lines written in batches)', () => {
  it('writes a line smaller than a batch on its own while the process runs on', async () => {
    const file = path.join(dir, 'idle.log');
    logger(file, 1, 10, 'stay');
    // The process lives until the test ends: the line is not written by the exit.
    const lines = await linesIn(file, 1, 20_000);
    assert.deepEqual(lines.map((l) => l.n), [0]);
  });

  it('loses no line and writes none twice when the process exits, returns or throws', async () => {
    const count = Math.ceil((LOG_BATCH_BYTES * 5) / 300) + 7;
    const all = Array.from({ length: count }, (_, i) => i);
    for (const then of ['exit', 'return', 'throw'] as const) {
      const file = path.join(dir, `${then}.log`);
      const child = logger(file, count, 200, then);
      const code = await ended(child);
      assert.equal(code, then === 'throw' ? 1 : 0, then);
      const numbers = written(file).map((l) => l.n);
      // A process that ends itself (process.exit, a throw) has what is left written synchronously
      // by pino at exit, which may land before a batch still being written: every line, once.
      assert.deepEqual([...numbers].sort((a, b) => a - b), all, then);
      // One whose work is done is flushed in order.
      if (then === 'return') assert.deepEqual(numbers, all);
    }
  });

  it('writes a line longer than a batch whole', async () => {
    const file = path.join(dir, 'long.log');
    const child = logger(file, 2, LOG_BATCH_BYTES * 3, 'exit');
    await ended(child);
    const lines = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
    assert.equal(lines.length, 2);
    for (const line of lines) assert.equal((JSON.parse(line) as { pad: string }).pad.length, LOG_BATCH_BYTES * 3);
  });
});
