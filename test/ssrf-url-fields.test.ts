import assert from 'node:assert/strict';
import dns from 'node:dns';
import { describe, it, mock } from 'node:test';
import { buildTestApp, type TestApp } from './support/app.ts';
import { signUp, type TestUser } from './support/fixtures.ts';

// Every URL field a client can save goes through the SSRF guard (platform/outbound/ssrf-guard.ts):
// loopback written as an IPv4-compatible IPv6 address, `[::127.0.0.1]`, is refused on each of
// them with 422 validation_failed naming the field, and nothing is saved; so is a name with a
// public and a private address (DNS answered by a stand-in for the resolver).

const LOOPBACK_V6 = 'http://[::127.0.0.1]:3799/hook';

interface UrlField {
  field: string;
  /** The refused request, given a fresh tenant (and whatever it needs to exist). */
  request(t: TestApp, user: TestUser, url: string): Promise<{ method: 'PUT' | 'POST' | 'PATCH'; url: string; payload: Record<string, unknown> }>;
}

async function created(t: TestApp, user: TestUser, url: string, payload: Record<string, unknown>): Promise<string> {
  const res = await t.request({ method: 'POST', url, token: user.accessToken, payload });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().id;
}

const FIELDS: Record<string, UrlField> = {
  'PUT /v1/webhooks': { field: 'webhook_url', request: async (_t, _u, url) => ({ method: 'PUT', url: '/v1/webhooks', payload: { webhook_url: url } }) },
  'POST /v1/agents (webhook_url)': { field: 'webhook_url', request: async (_t, _u, url) => ({ method: 'POST', url: '/v1/agents', payload: { name: 'Hooked', webhook_url: url } }) },
  'POST /v1/agents (function url)': {
    field: 'functions.0.url',
    request: async (_t, _u, url) => ({ method: 'POST', url: '/v1/agents', payload: { name: 'Caller', functions: [{ name: 'lookup', url }] } }),
  },
  'PATCH /v1/agents/{id} (webhook_url)': {
    field: 'webhook_url',
    request: async (t, user, url) => ({ method: 'PATCH', url: `/v1/agents/${await created(t, user, '/v1/agents', { name: 'Later' })}`, payload: { webhook_url: url } }),
  },
  'PATCH /v1/agents/{id} (function url)': {
    field: 'functions.0.url',
    request: async (t, user, url) => ({ method: 'PATCH', url: `/v1/agents/${await created(t, user, '/v1/agents', { name: 'Later' })}`, payload: { functions: [{ name: 'lookup', url }] } }),
  },
  'POST /v1/knowledge-base/{id}/sources': {
    field: 'url',
    request: async (t, user, url) => ({ method: 'POST', url: `/v1/knowledge-base/${await created(t, user, '/v1/knowledge-base', { name: 'Docs' })}/sources`, payload: { type: 'url', url } }),
  },
};

describe('URL fields refuse an IPv4-compatible IPv6 loopback (ALLOW_PRIVATE_URLS=false)', async () => {
  const t = await buildTestApp({ env: { ALLOW_PRIVATE_URLS: 'false' } });

  for (const [operation, { field, request }] of Object.entries(FIELDS)) {
    it(`${operation}: 422 naming ${field}`, async () => {
      const user = await signUp(t);
      const { method, url, payload } = await request(t, user, LOOPBACK_V6);
      const res = await t.request({ method, url, payload, token: user.accessToken });
      assert.equal(res.statusCode, 422, res.body);
      assert.equal(res.json().code, 'validation_failed');
      assert.deepEqual(res.json().errors.map((e: { path: string }) => e.path), [field]);
      assert.match(res.json().errors[0].message, /private, loopback, link-local or reserved address/);
    });
  }

  it('a host with a public and a private A record is refused on every URL field, whichever answer comes first', async () => {
    const real = dns.promises.lookup;
    for (const answers of [['93.184.216.34', '10.0.0.5'], ['10.0.0.5', '93.184.216.34']]) {
      const lookup = mock.method(dns.promises, 'lookup', async (host: string, options: dns.LookupAllOptions) =>
        host === 'mixed.example.com' ? answers.map((address) => ({ address, family: 4 })) : real(host, options),
      );
      try {
        for (const [operation, { field, request }] of Object.entries(FIELDS)) {
          const user = await signUp(t);
          const { method, url, payload } = await request(t, user, 'https://mixed.example.com/hook');
          const res = await t.request({ method, url, payload, token: user.accessToken });
          assert.equal(res.statusCode, 422, `${operation} (${answers}): ${res.body}`);
          assert.deepEqual(res.json().errors.map((e: { path: string }) => e.path), [field]);
          assert.match(res.json().errors[0].message, /10\.0\.0\.5/);
        }
      } finally {
        lookup.mock.restore();
      }
    }
  });

  it('nothing was saved by a refused write', async () => {
    const user = await signUp(t);
    const refused = await t.request({ method: 'PUT', url: '/v1/webhooks', token: user.accessToken, payload: { webhook_url: LOOPBACK_V6 } });
    assert.equal(refused.statusCode, 422);
    assert.equal((await t.request({ method: 'GET', url: '/v1/webhooks', token: user.accessToken })).statusCode, 404);
    const agents = await t.request({ method: 'GET', url: '/v1/agents', token: user.accessToken });
    assert.deepEqual(agents.json().data, []);
  });
});
