import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTestApp } from '../../../test/support/app.ts';
import { createApiKey, signUp } from '../../../test/support/fixtures.ts';
import { securitySuite } from '../../../test/support/security.ts';
import { as } from '../calls/test-helpers.ts';

const t = await buildTestApp();
const unique = () => `brand-${Math.random().toString(36).slice(2, 10)}.example.com`;

describe('white-label branding', () => {
  it('puts, reads back, looks up publicly by domain (case-insensitive), replaces and deletes', async () => {
    const user = await signUp(t);
    const domain = unique();
    const none = await t.request({ method: 'GET', url: '/v1/branding', ...as(user) });
    assert.equal(none.statusCode, 404, none.body);

    const put = await t.request({
      method: 'PUT',
      url: '/v1/branding',
      ...as(user),
      payload: { domain: domain.toUpperCase(), name: 'Acme Voice', logo_url: 'https://cdn.example.com/logo.png', primary_color: '#0E7490', support_email: 'help@example.com' },
    });
    assert.equal(put.statusCode, 200, put.body);
    assert.equal(put.json().domain, domain);
    assert.equal(put.json().primary_color, '#0e7490');
    assert.equal(put.json().accent_color, '#0f172a');
    assert.equal(put.json().hide_powered_by, false);

    const got = await t.request({ method: 'GET', url: '/v1/branding', ...as(user) });
    assert.deepEqual(got.json(), put.json());

    // Public: no credentials, by domain in any case; no timestamps, nothing about the workspace.
    const lookup = await t.request({ method: 'GET', url: `/v1/branding/${domain.toUpperCase()}` });
    assert.equal(lookup.statusCode, 200, lookup.body);
    assert.deepEqual(Object.keys(lookup.json()).sort(), ['accent_color', 'domain', 'favicon_url', 'hide_powered_by', 'logo_url', 'name', 'primary_color', 'support_email', 'support_url']);
    assert.equal(lookup.json().name, 'Acme Voice');
    assert.ok(lookup.headers['ratelimit-limit'], 'public lookups are rate limited per IP');

    // PUT replaces the whole branding: fields left out take their defaults; a new domain frees the old one.
    const other = unique();
    const replaced = await t.request({ method: 'PUT', url: '/v1/branding', ...as(user), payload: { domain: other, name: 'Acme 2', hide_powered_by: true } });
    assert.equal(replaced.statusCode, 200, replaced.body);
    assert.equal(replaced.json().logo_url, null);
    assert.equal(replaced.json().created_at, put.json().created_at);
    assert.equal((await t.request({ method: 'GET', url: `/v1/branding/${domain}` })).statusCode, 404);
    assert.equal((await t.request({ method: 'GET', url: `/v1/branding/${other}` })).json().hide_powered_by, true);

    assert.equal((await t.request({ method: 'DELETE', url: '/v1/branding', ...as(user) })).statusCode, 204);
    assert.equal((await t.request({ method: 'DELETE', url: '/v1/branding', ...as(user) })).statusCode, 404);
    const gone = await t.request({ method: 'GET', url: `/v1/branding/${other}` });
    assert.equal(gone.statusCode, 404);
    assert.equal(gone.json().code, 'not_found');
  });

  it('keeps a domain to one workspace (409), and frees it once deleted', async () => {
    const first = await signUp(t);
    const second = await signUp(t);
    const domain = unique();
    assert.equal((await t.request({ method: 'PUT', url: '/v1/branding', ...as(first), payload: { domain, name: 'First' } })).statusCode, 200);
    const taken = await t.request({ method: 'PUT', url: '/v1/branding', ...as(second), payload: { domain: `${domain.toUpperCase()}.`, name: 'Second' } });
    assert.equal(taken.statusCode, 409, taken.body);
    assert.equal(taken.json().code, 'conflict');
    assert.equal((await t.request({ method: 'GET', url: '/v1/branding', ...as(second) })).statusCode, 404);
    assert.equal((await t.request({ method: 'DELETE', url: '/v1/branding', ...as(first) })).statusCode, 204);
    assert.equal((await t.request({ method: 'PUT', url: '/v1/branding', ...as(second), payload: { domain, name: 'Second' } })).statusCode, 200);
  });

  it('refuses bad input with 422 naming the field', async () => {
    const user = await signUp(t);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ domain: 'https://x.example.com', name: 'A' }, 'domain'],
      [{ domain: 'x.example.com:8080', name: 'A' }, 'domain'],
      [{ domain: unique(), name: 'A', primary_color: 'red' }, 'primary_color'],
      [{ domain: unique(), name: 'A', logo_url: 'javascript:alert(1)' }, 'logo_url'],
      [{ domain: unique(), name: 'A', support_email: 'not an email' }, 'support_email'],
      [{ domain: unique() }, 'name'],
      [{ domain: unique(), name: 'A', extra: 1 }, 'extra'],
    ];
    for (const [payload, field] of cases) {
      const res = await t.request({ method: 'PUT', url: '/v1/branding', ...as(user), payload });
      assert.equal(res.statusCode, 422, `${JSON.stringify(payload)}: ${res.body}`);
      assert.ok(res.json().errors.some((e: { path: string }) => e.path === field), `${field}: ${res.body}`);
    }
  });

  it('is an admin operation: a write API key cannot change it', async () => {
    const user = await signUp(t);
    const key = await createApiKey(t, user, 'write');
    const res = await t.request({ method: 'PUT', url: '/v1/branding', token: key.key, payload: { domain: unique(), name: 'A' } });
    assert.equal(res.statusCode, 403);
  });
});

securitySuite('branding', async () => t, {
  'GET /v1/branding': { scope: 'admin', prepare: async () => ({ method: 'GET', url: '/v1/branding' }) },
  'PUT /v1/branding': { scope: 'admin', prepare: async () => ({ method: 'PUT', url: '/v1/branding', payload: { domain: unique(), name: 'Sec' } }) },
  'DELETE /v1/branding': { scope: 'admin', prepare: async () => ({ method: 'DELETE', url: '/v1/branding' }) },
});
