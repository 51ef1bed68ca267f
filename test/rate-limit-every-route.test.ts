import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { buildTestApp } from './support/app.ts';
import { signUp } from './support/fixtures.ts';

// Every rate-limited operation in openapi.json (those documenting a 429), called twice under a
// limit of one request per minute: the first answer carries the RateLimit-* headers, the second
// is 429 rate_limited with Retry-After. Authenticated routes use a fresh user per route (one
// bucket per principal); public routes a fresh client address per route (one bucket per IP).

const spec = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '..', 'openapi.json'), 'utf8'));
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

interface Operation {
  method: string;
  path: string;
  isPublic: boolean;
}

const operations: Operation[] = Object.entries(spec.paths as Record<string, Record<string, { responses?: Record<string, unknown>; security?: unknown[] }>>)
  .flatMap(([p, item]) =>
    METHODS.filter((m) => item[m]).map((m) => ({ method: m.toUpperCase(), path: p, op: item[m] })),
  )
  .filter(({ op }) => op.responses && '429' in op.responses)
  .map(({ method, path: p, op }) => ({ method, path: p, isPublic: Array.isArray(op.security) && op.security.length === 0 }));

function concretePath(template: string, workspaceId: string): string {
  return template.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    if (template.startsWith('/v1/workspaces/') && name === 'id') return workspaceId;
    return `${name.replace(/[^a-z]/g, '')}_00000000000000000000000000`;
  });
}

function assertLimitHeaders(headers: Record<string, unknown>, where: string) {
  for (const name of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'ratelimit-policy']) {
    assert.ok(headers[name] !== undefined, `${where}: missing ${name}`);
  }
}

describe('every rate-limited route answers 429 with headers once its bucket is spent', async () => {
  const t = await buildTestApp({ env: { RATE_LIMIT_USER_PER_MIN: '1', RATE_LIMIT_IP_PER_MIN: '1', RATE_LIMIT_DEMO_PER_MIN: '1' } });
  let address = 0;
  let fixtureAddress = 0;
  const nextFixtureAddress = () => `192.0.${(++fixtureAddress >> 8) & 255}.${fixtureAddress & 255}`;

  it('covers at least the rate-limited operations of the foundation', () => {
    assert.ok(operations.length >= 2, `found ${operations.length} operations`);
  });

  for (const op of operations) {
    it(`${op.method} ${op.path}`, async () => {
      const remoteAddress = `10.${(address >> 16) & 255}.${(address >> 8) & 255}.${++address & 255}`;
      // Two sessions of one user: a first request that ends its session (logout) leaves the second
      // able to reach the gate, and both count against the one bucket of that user.
      const tokens: Array<string | undefined> = [undefined, undefined];
      let workspaceId = 'ws_00000000000000000000000000';
      if (!op.isPublic) {
        // The fixture's own requests each come from an address of their own, so they spend nothing here.
        const user = await signUp(t, { remoteAddress: nextFixtureAddress });
        const second = await t.request({ method: 'POST', url: '/v1/auth/login', remoteAddress: nextFixtureAddress(), payload: { email: user.email, password: user.password } });
        assert.equal(second.statusCode, 200, second.body);
        tokens.splice(0, 2, user.accessToken, second.json().access_token);
        workspaceId = user.workspaceId;
      }
      const request = (token: string | undefined) =>
        t.request({ method: op.method as 'GET', url: concretePath(op.path, workspaceId), token, remoteAddress, ...(op.method === 'GET' || op.method === 'DELETE' ? {} : { payload: {} }) });
      const first = await request(tokens[0]);
      assert.notEqual(first.statusCode, 429, first.body);
      assertLimitHeaders(first.headers, 'first response');
      assert.equal(first.headers['ratelimit-remaining'], '0');
      const second = await request(tokens[1]);
      assert.equal(second.statusCode, 429, second.body);
      assert.equal(second.json().code, 'rate_limited');
      assertLimitHeaders(second.headers, '429');
      assert.match(String(second.headers['retry-after']), /^\d+$/);
    });
  }
});
