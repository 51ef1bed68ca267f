import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { OPERATIONS, VoiceAgent } from '../../sdks/typescript/src/index.ts';
import { withFieldTypeChanged, withOperationAdded } from './spec-changes.ts';

// The TypeScript SDK against openapi.json: its generated models and resources are what the
// document gives today (a field whose type changed, or a new operation, fails the check), and
// every operation is a method of the client that sends that operation's method and path.

const root = path.resolve(import.meta.dirname, '..', '..');
const sdk = path.join(root, 'sdks', 'typescript');
const spec = JSON.parse(fs.readFileSync(path.join(root, 'openapi.json'), 'utf8'));
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-sdk-ts-'));
after(() => fs.rmSync(work, { recursive: true, force: true }));

function check(document?: unknown) {
  const args = ['scripts/generate.mjs', '--check'];
  if (document) {
    const file = path.join(work, `openapi-${Math.random().toString(36).slice(2)}.json`);
    fs.writeFileSync(file, JSON.stringify(document));
    args.push('--spec', file);
  }
  return spawnSync(process.execPath, args, { cwd: sdk, encoding: 'utf8' });
}

type Operation = { operationId: string; parameters?: { in: string; name: string }[]; requestBody?: unknown; security?: unknown[] };

const operations = Object.entries(spec.paths as Record<string, Record<string, Operation>>).flatMap(([route, item]) =>
  Object.entries(item)
    .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
    .map(([method, op]) => ({ route, method: method.toUpperCase(), op })),
);

describe('TypeScript SDK coverage of openapi.json', () => {
  it('the committed models and resources are generated from the committed openapi.json', () => {
    const result = check();
    assert.equal(result.status, 0, result.stderr);
  });

  it('the check fails when openapi.json changes the type of a field', () => {
    const result = check(withFieldTypeChanged(spec));
    assert.equal(result.status, 1);
    assert.match(result.stderr, /out of date.*models\.ts/);
  });

  it('the check fails when openapi.json gains an operation', () => {
    const result = check(withOperationAdded(spec));
    assert.equal(result.status, 1);
    assert.match(result.stderr, /resources\/agents\.ts/);
    assert.match(result.stderr, /operations\.ts/);
  });

  it(`every one of the ${operations.length} operations is a client method sending its method and path (and the User-Agent)`, async () => {
    const sent: { method: string; path: string; auth: boolean }[] = [];
    const fetch = async (url: string | URL | Request, init?: RequestInit) => {
      const headers = (init?.headers ?? {}) as Record<string, string>;
      assert.equal(headers['user-agent'], 'voice-agent-platform-typescript/1.4.0');
      sent.push({ method: String(init?.method), path: new URL(String(url)).pathname, auth: 'authorization' in headers });
      const page = { data: [], has_more: false, next_cursor: null, access_token: 'a', refresh_token: 'r', expires_in: 60 };
      return new Response(JSON.stringify(page), { status: 200, headers: { 'content-type': 'application/json' } });
    };
    const client = new VoiceAgent({ baseURL: 'http://sdk.test', apiKey: 'sk_test', fetch: fetch as typeof globalThis.fetch, maxRetries: 0 });
    assert.equal(Object.keys(OPERATIONS).length, operations.length);
    for (const { route, method, op } of operations) {
      const place = OPERATIONS[op.operationId as keyof typeof OPERATIONS];
      assert.ok(place, `${op.operationId} (${method} ${route}) is missing from the TypeScript SDK`);
      const resource = (client as unknown as Record<string, Record<string, (...args: unknown[]) => unknown>>)[place.resource];
      assert.equal(typeof resource?.[place.method], 'function', `client.${place.resource}.${place.method}`);
      const pathParams = (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => `v-${p.name}`);
      const args: unknown[] = [...pathParams];
      if (op.requestBody) args.push({});
      if ((op.parameters ?? []).some((p) => p.in === 'query')) args.push({});
      args.push({ maxRetries: 0 });
      await resource[place.method](...args);
      const expected = route.replace(/\{(\w+)\}/g, (_, name) => `v-${name}`);
      assert.deepEqual(sent.pop(), { method, path: expected, auth: !(Array.isArray(op.security) && op.security.length === 0) }, `client.${place.resource}.${place.method}`);
    }
  });
});
