import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { startPlatform } from './platform.ts';
import { withFieldTypeChanged, withOperationAdded } from './spec-changes.ts';

// The Go SDK (sdks/go, standard library only): its generated code is what openapi.json gives (a
// changed field type or a new operation fails the check), it is gofmt- and vet-clean, and its own
// `go test` suite (unit tests against a local fake, then `-tags integration` against the real
// platform started here with 3-second access tokens) passes. Go's build cache lives in the
// repository's ignored .test-work/ so a second run compiles nothing; no module is downloaded.

const root = path.resolve(import.meta.dirname, '..', '..');
const sdk = path.join(root, 'sdks', 'go');
const spec = JSON.parse(fs.readFileSync(path.join(root, 'openapi.json'), 'utf8'));
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-sdk-go-'));
after(() => fs.rmSync(work, { recursive: true, force: true }));

const goEnv = {
  ...process.env,
  GOCACHE: path.join(root, '.test-work', 'go-cache'),
  GOPATH: path.join(root, '.test-work', 'go-path'),
  GOPROXY: 'off',
  GOFLAGS: '-mod=mod',
  GOTOOLCHAIN: 'local',
};

function check(document?: unknown) {
  const args = ['scripts/generate.mjs', '--check'];
  if (document) {
    const file = path.join(work, `openapi-${Math.random().toString(36).slice(2)}.json`);
    fs.writeFileSync(file, JSON.stringify(document));
    args.push('--spec', file);
  }
  return spawnSync(process.execPath, args, { cwd: sdk, encoding: 'utf8' });
}

function go(args: string[], env: Record<string, string> = {}): Promise<{ status: number | null; output: string }> {
  const child = spawn('go', args, { cwd: sdk, env: { ...goEnv, ...env } });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk;
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk;
  });
  return new Promise((resolve) => child.on('close', (status) => resolve({ status, output })));
}

describe('Go SDK', () => {
  it('the committed *_gen.go files are generated from the committed openapi.json', () => {
    const result = check();
    assert.equal(result.status, 0, result.stderr);
  });

  it('the check fails when openapi.json changes the type of a field', () => {
    const result = check(withFieldTypeChanged(spec));
    assert.equal(result.status, 1);
    assert.match(result.stderr, /out of date.*models_gen\.go/);
  });

  it('the check fails when openapi.json gains an operation the SDK lacks', () => {
    const result = check(withOperationAdded(spec));
    assert.equal(result.status, 1);
    assert.match(result.stderr, /agents_gen\.go/);
    assert.match(result.stderr, /operations_gen\.go/);
  });

  it('is gofmt-clean and vet-clean', { timeout: 120_000 }, async () => {
    const format = spawnSync('gofmt', ['-l', '.'], { cwd: sdk, encoding: 'utf8' });
    assert.equal(format.status, 0, format.stderr);
    assert.equal(format.stdout, '', `not gofmt-formatted: ${format.stdout}`);
    const vet = await go(['vet', '-tags', 'integration', './...']);
    assert.equal(vet.status, 0, vet.output);
  });

  it('its go test suite passes, offline and against the platform', { timeout: 240_000 }, async () => {
    const { baseURL } = await startPlatform();
    const result = await go(['test', '-tags', 'integration', '-count=1', '-v', './...'], { VAP_BASE_URL: baseURL });
    assert.equal(result.status, 0, result.output);
    assert.match(result.output, /^ok\s+github\.com\/voice-agent-platform\/sdk-go\s/m, result.output);
    assert.doesNotMatch(result.output, /--- SKIP/);
    for (const name of ['TestEveryOperationIsAMethodSendingItsMethodAndPath', 'TestPostRetriedAfter429And503WithOneIdempotencyKey', 'TestPlatformLoginThenOneRefreshSharedByConcurrentRequests', 'TestPlatformPagination', 'TestPlatformStreamedUploadsAndDownload', 'TestPlatformReadmeQuickstartRunsAsPrinted']) {
      assert.match(result.output, new RegExp(`--- PASS: ${name} `), `${name} did not pass:\n${result.output}`);
    }
  });
});
