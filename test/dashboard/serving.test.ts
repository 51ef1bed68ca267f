import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import Fastify from 'fastify';
import { DASHBOARD_DIST } from '../../src/modules/dashboard/assets.ts';
import { createDashboard, DASHBOARD_CSP } from '../../src/modules/dashboard/routes.ts';
import { buildTestApp } from '../support/app.ts';
// @ts-expect-error: a plain .mjs script without type declarations
import { dashboardInputsHash } from '../../scripts/dashboard-inputs.mjs';

// The dashboard as the platform serves it: the committed build is the build of the committed
// sources, `/` and client routes answer index.html with its CSP, assets are immutable and
// gzipped, and nothing of the API, /docs or /openapi.json is shadowed.

const t = await buildTestApp();
const assetName = fs.readdirSync(path.join(DASHBOARD_DIST, 'assets')).find((name) => /^index-.*\.js$/.test(name))!;
const html = { accept: 'text/html,application/xhtml+xml' };

describe('the dashboard build', () => {
  it('is the build of the committed sources (else run npm run dashboard:build and commit web/dashboard/dist)', () => {
    const info = JSON.parse(fs.readFileSync(path.join(DASHBOARD_DIST, 'build-info.json'), 'utf8'));
    assert.equal(info.inputs_sha256, dashboardInputsHash(), 'web/dashboard/dist is stale: run `npm run dashboard:build` and commit it');
    assert.ok(info.first_load_gzip_bytes <= 300 * 1024, `first load ${info.first_load_gzip_bytes} B gzipped is over the 300 KiB budget`);
    const index = fs.readFileSync(path.join(DASHBOARD_DIST, 'index.html'), 'utf8');
    assert.ok(index.includes(`/assets/${assetName}`), 'index.html names the built script');
    assert.doesNotMatch(index, /<script>(?!<\/script>)|<style>|\son\w+=/, 'nothing inline: the CSP allows only the dashboard files');
  });
});

describe('serving the dashboard', () => {
  it('answers / and client routes with index.html, revalidated, under a strict CSP', async () => {
    for (const url of ['/', '/agents', '/calls/call_123?x=1', '/login']) {
      const res = await t.request({ method: 'GET', url, headers: html });
      assert.equal(res.statusCode, 200, url);
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
      assert.equal(res.headers['cache-control'], 'no-cache');
      assert.equal(res.headers['content-security-policy'], DASHBOARD_CSP);
      assert.equal(res.headers['x-frame-options'], 'DENY');
      assert.match(res.body, /<div id="root"><\/div>/);
    }
    const root = await t.request({ method: 'GET', url: '/' });
    const again = await t.request({ method: 'GET', url: '/', headers: { 'if-none-match': String(root.headers.etag) } });
    assert.equal(again.statusCode, 304);
  });

  it('serves the hashed assets immutable, gzipped to clients that accept it', async () => {
    const plain = await t.request({ method: 'GET', url: `/assets/${assetName}` });
    assert.equal(plain.statusCode, 200);
    assert.equal(plain.headers['content-type'], 'text/javascript; charset=utf-8');
    assert.equal(plain.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal(plain.headers['content-encoding'], undefined);
    const gzipped = await t.request({ method: 'GET', url: `/assets/${assetName}`, headers: { 'accept-encoding': 'gzip, br' } });
    assert.equal(gzipped.headers['content-encoding'], 'gzip');
    assert.ok(gzipped.rawPayload.length < plain.rawPayload.length);
    const missing = await t.request({ method: 'GET', url: '/assets/nope.js', headers: html });
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.headers['content-type'], 'application/problem+json; charset=utf-8');
    const traversal = await t.request({ method: 'GET', url: '/assets/..%2F..%2Fpackage.json' });
    assert.equal(traversal.statusCode, 404);
  });

  it('shadows nothing: the API, /docs, /openapi.json and the widget script keep their answers', async () => {
    const unknownApi = await t.request({ method: 'GET', url: '/v1/nothing-here', headers: html });
    assert.equal(unknownApi.statusCode, 404);
    assert.equal(unknownApi.json().code, 'not_found');
    assert.equal((await t.request({ method: 'GET', url: '/v1/agents', headers: html })).statusCode, 401);
    assert.equal((await t.request({ method: 'GET', url: '/v1/health' })).statusCode, 200);
    const openapi = await t.request({ method: 'GET', url: '/openapi.json', headers: html });
    assert.equal(openapi.statusCode, 200);
    assert.ok(openapi.json().paths['/v1/agents']);
    assert.equal((await t.request({ method: 'GET', url: '/docs/', headers: html })).statusCode, 200);
    assert.equal((await t.request({ method: 'GET', url: '/docs/nope', headers: html })).statusCode, 404);
    const widget = await t.request({ method: 'GET', url: '/v1/widgets/wgt_00000000000000000000000000/embed.js', headers: html });
    assert.equal(widget.headers['content-type'], 'application/problem+json; charset=utf-8');
    // Not a page navigation: the platform's 404, not the app.
    const api = await t.request({ method: 'GET', url: '/somewhere' });
    assert.equal(api.statusCode, 404);
    assert.equal(api.json().code, 'not_found');
    assert.equal((await t.request({ method: 'POST', url: '/agents', headers: html, payload: {} })).statusCode, 404);
    // What the router refuses stays refused, even for a browser: an over-long id is 414, not the app.
    const long = await t.request({ method: 'GET', url: `/v1/agents/${'a'.repeat(300)}`, headers: html });
    assert.equal(long.statusCode, 414);
    // A missing asset is a 404, not the app.
    assert.equal((await t.request({ method: 'GET', url: '/assets/missing.js', headers: html })).statusCode, 404);
  });

  it("in Stripe mode lets Stripe.js run (script, frames, its API) and tells the page its settings", async () => {
    const app = Fastify();
    const stripe = { publishableKey: 'pk_test_abc', jsUrl: 'https://js.stripe.com/v3/' };
    await app.register(createDashboard({ paymentsProvider: 'stripe', stripe }).routes);
    const page = await app.inject({ method: 'GET', url: '/' });
    const csp = String(page.headers['content-security-policy']);
    assert.match(csp, /script-src 'self' https:\/\/js\.stripe\.com https:\/\/\*\.js\.stripe\.com;/);
    assert.match(csp, /connect-src 'self' https:\/\/api\.stripe\.com;/);
    assert.match(csp, /frame-src https:\/\/js\.stripe\.com https:\/\/\*\.js\.stripe\.com https:\/\/hooks\.stripe\.com;/);
    const config = await app.inject({ method: 'GET', url: '/dashboard-config.json' });
    assert.deepEqual(config.json(), { payments_provider: 'stripe', stripe: { publishable_key: 'pk_test_abc', js_url: 'https://js.stripe.com/v3/' } });
    await app.close();
    // Sandbox (the test app): no third-party origin anywhere, and no Stripe settings.
    assert.doesNotMatch(DASHBOARD_CSP, /stripe|frame-src/);
    assert.deepEqual((await t.request({ method: 'GET', url: '/dashboard-config.json' })).json(), { payments_provider: 'sandbox', stripe: null });
    // Stripe without a publishable key: the page is told it cannot take cards; the CSP stays strict.
    const keyless = Fastify();
    await keyless.register(createDashboard({ paymentsProvider: 'stripe' }).routes);
    assert.deepEqual((await keyless.inject({ method: 'GET', url: '/dashboard-config.json' })).json(), { payments_provider: 'stripe', stripe: null });
    assert.equal((await keyless.inject({ method: 'GET', url: '/' })).headers['content-security-policy'], DASHBOARD_CSP);
    await keyless.close();
  });

  it('says how to build it when the build is missing', async () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-no-dashboard-'));
    const app = Fastify();
    await app.register(createDashboard({ dist: empty }).routes);
    const res = await app.inject({ method: 'GET', url: '/' });
    assert.equal(res.statusCode, 503);
    assert.match(res.body, /npm run dashboard:build/);
    await app.close();
    fs.rmSync(empty, { recursive: true });
  });
});
