import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, it } from 'node:test';
import { promisify } from 'node:util';
import { MPEGDecoder } from 'mpg123-decoder';
import { freePort } from './support/ports.ts';

// The README's quickstart, run as a newcomer would: `npm start` on a fresh data directory, then
// the curl block of the README, unchanged but for the port. It places a sandbox call and fetches
// its transcript and MP3.

const root = path.resolve(import.meta.dirname, '..');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-readme-'));
let server: ChildProcess | undefined;
after(() => {
  server?.kill('SIGKILL');
  fs.rmSync(work, { recursive: true, force: true });
});

it('the README quickstart places a sandbox call and fetches its transcript and recording', { timeout: 240_000 }, async () => {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  const block = /## Quickstart \(curl\)[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1];
  assert.ok(block, 'the README has a curl quickstart');
  const port = await freePort();
  const env: Record<string, string> = { ...(process.env as Record<string, string>), PORT: String(port), HOST: '127.0.0.1', DATA_DIR: path.join(work, 'data'), LOG_LEVEL: 'info' };
  delete env.DATABASE_URL;
  server = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'ignore'] });
  let log = '';
  server.stdout?.on('data', (chunk: Buffer) => {
    if (log.length < 1 << 20) log += chunk.toString();
  });
  // Up to two minutes: a loaded machine starts a server slowly (a cold start on a fresh DATA_DIR
  // took 30-36 s with the suite beside it), which is no failure of the quickstart.
  const deadline = Date.now() + 120_000;
  while (!(await fetch(`http://127.0.0.1:${port}/v1/health`).then((r) => r.ok, () => false))) {
    assert.ok(Date.now() < deadline, `the server did not start within 120 s: ${log.slice(-2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const script = block.replace('B=http://localhost:3000', `B=http://127.0.0.1:${port}`);
  const { stdout } = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', script], { cwd: work, timeout: 90_000, maxBuffer: 1 << 20 });
  assert.match(stdout, /completed$/m, stdout);
  assert.match(stdout, /^user: Hi, what are your opening hours\?$/m);
  assert.match(stdout, /^agent: Hello, Acme here\. How can I help\?$/m);
  assert.match(stdout, /\b2\nrunning$/m, 'the campaign took both contacts and runs');
  assert.match(stdout, /^<script src="http:\/\/127\.0\.0\.1:\d+\/v1\/widgets\/wdg_\w+\/embed\.js" async><\/script>$/m);
  const mp3 = fs.readFileSync(path.join(work, 'call.mp3'));
  const decoder = new MPEGDecoder();
  await decoder.ready;
  const { samplesDecoded, sampleRate } = decoder.decode(new Uint8Array(mp3));
  decoder.free();
  assert.ok(samplesDecoded / sampleRate > 5, `a recording of ${samplesDecoded / sampleRate} s`);
  // The start-up log says which media engines run (espeak-ng is installed where the suite runs: .ci/run).
  assert.match(log, /media: telephony sandbox \(simulated\) · stt passthrough \(simulated\) · tts built-in voices via espeak-ng/, log.slice(0, 2000));
});
