import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { MPEGDecoder } from 'mpg123-decoder';
import { uniqueEmail } from '../support/fixtures.ts';
import { startPlatform } from './platform.ts';

// The TypeScript SDK as a user gets it: built by its own script (ES modules and CommonJS), then
// the README's quickstart program run exactly as printed against the real platform: log in,
// create an agent, place a sandbox call, wait for it, download its MP3, verify its webhook.

const root = path.resolve(import.meta.dirname, '..', '..');
const sdk = path.join(root, 'sdks', 'typescript');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-sdk-quickstart-'));
after(() => fs.rmSync(work, { recursive: true, force: true }));

describe('TypeScript SDK package and quickstart', () => {
  it('builds as ES modules and CommonJS, both at version 1.4.0', async () => {
    const built = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: sdk, encoding: 'utf8' });
    assert.equal(built.status, 0, built.stderr + built.stdout);
    const pkg = JSON.parse(fs.readFileSync(path.join(sdk, 'package.json'), 'utf8'));
    assert.equal(pkg.version, '1.4.0');
    assert.deepEqual(pkg.dependencies ?? {}, {}, 'no runtime dependency');
    const cjs = createRequire(import.meta.url)(path.join(sdk, pkg.exports['.'].require.default));
    const esm = await import(pathToFileURL(path.join(sdk, pkg.exports['.'].import.default)).href);
    for (const module of [cjs, esm]) {
      assert.equal(module.VERSION, '1.4.0');
      assert.equal(typeof new module.VoiceAgent({ baseURL: 'http://x' }).calls.waitUntilEnded, 'function');
    }
    assert.ok(fs.existsSync(path.join(sdk, pkg.exports['.'].require.types)));
    assert.ok(fs.existsSync(path.join(sdk, pkg.exports['.'].import.types)));
    assert.match(fs.readFileSync(path.join(sdk, 'CHANGELOG.md'), 'utf8'), /^## 1\.4\.0$/m);
  });

  it("the README's quickstart runs as printed: sandbox call, recording, verified webhook", { timeout: 120_000 }, async () => {
    const { baseURL } = await startPlatform();
    const readme = fs.readFileSync(path.join(sdk, 'README.md'), 'utf8');
    const program = /## Quickstart[\s\S]*?```js\n([\s\S]*?)```/.exec(readme)?.[1];
    assert.ok(program, 'the README has a quickstart program');
    assert.equal(program, fs.readFileSync(path.join(sdk, 'examples', 'quickstart.mjs'), 'utf8'), 'examples/quickstart.mjs is the README program');
    fs.mkdirSync(path.join(work, 'node_modules', '@voice-agent-platform'), { recursive: true });
    fs.symlinkSync(sdk, path.join(work, 'node_modules', '@voice-agent-platform', 'sdk'));
    fs.writeFileSync(path.join(work, 'quickstart.mjs'), program);
    const email = uniqueEmail('quickstart');
    const registered = await fetch(`${baseURL}/v1/auth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: 'correct horse battery' }) });
    assert.equal(registered.status, 201);
    const env = { ...process.env, VAP_BASE_URL: baseURL, VAP_EMAIL: email, VAP_PASSWORD: 'correct horse battery' };
    const { stdout } = await promisify(execFile)(process.execPath, ['quickstart.mjs'], { cwd: work, env, timeout: 100_000 });
    assert.match(stdout, /^tokens until \d{4}-/m);
    assert.match(stdout, /^call completed after \d+ s$/m, stdout);
    assert.match(stdout, /^recording saved: \d+ bytes$/m, stdout);
    assert.match(stdout, /^verified webhook call\.ended: completed$/m, stdout);
    const decoder = new MPEGDecoder();
    await decoder.ready;
    const { samplesDecoded, sampleRate } = decoder.decode(new Uint8Array(fs.readFileSync(path.join(work, 'call.mp3'))));
    decoder.free();
    assert.ok(samplesDecoded / sampleRate > 2, `a recording of ${samplesDecoded / sampleRate} s`);
  });
});
