import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { startPlatform } from './platform.ts';

// The Python SDK (sdks/python, standard library only): its generated code is what openapi.json
// gives (a changed field type fails the check), and its own unittest suite runs against the real
// platform started here (3-second access tokens) and a local fake for retries.

const root = path.resolve(import.meta.dirname, '..', '..');
const sdk = path.join(root, 'sdks', 'python');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-sdk-py-'));
after(() => fs.rmSync(work, { recursive: true, force: true }));

describe('Python SDK', () => {
  it('the generated models and resources follow openapi.json; a changed field type fails the check', () => {
    const fresh = spawnSync('python3', ['scripts/generate.py', '--check'], { cwd: sdk, encoding: 'utf8' });
    assert.equal(fresh.status, 0, fresh.stderr);
    const spec = JSON.parse(fs.readFileSync(path.join(root, 'openapi.json'), 'utf8'));
    spec.paths['/v1/agents/{id}'].get.responses['200'].content['application/json'].schema.properties.name = { type: 'integer' };
    const file = path.join(work, 'openapi.json');
    fs.writeFileSync(file, JSON.stringify(spec));
    const changed = spawnSync('python3', ['scripts/generate.py', '--check', '--spec', file], { cwd: sdk, encoding: 'utf8' });
    assert.equal(changed.status, 1);
    assert.match(changed.stderr, /out of date.*models\.py/);
  });

  it('its unittest suite passes against the platform', { timeout: 240_000 }, async () => {
    const { baseURL } = await startPlatform();
    const child = spawn('python3', ['-m', 'unittest', 'discover', '-s', 'tests', '-v'], { cwd: sdk, env: { ...process.env, VAP_BASE_URL: baseURL, PYTHONDONTWRITEBYTECODE: '1' } });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk;
    });
    const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(status, 0, output);
    assert.match(output, /^OK$/m, output);
    assert.doesNotMatch(output, /skipped/);
  });
});
