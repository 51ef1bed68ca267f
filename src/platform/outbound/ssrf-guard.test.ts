import assert from 'node:assert/strict';
import dns from 'node:dns';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it, mock } from 'node:test';
import { assertPublicUrl, createOutboundClient, isPublicAddress, UrlRefusedError } from './ssrf-guard.ts';

describe('SSRF guard', () => {
  it('classifies addresses', () => {
    for (const a of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', 'fc00::1', '::ffff:127.0.0.1', '224.0.0.1']) {
      assert.equal(isPublicAddress(a), false, a);
    }
    for (const a of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111']) assert.equal(isPublicAddress(a), true, a);
  });

  it('refuses non-http schemes, credentials and private hosts', async () => {
    await assert.rejects(assertPublicUrl('ftp://example.com/x', { allowPrivate: false }), /http or https/);
    await assert.rejects(assertPublicUrl('http://user:pw@8.8.8.8/', { allowPrivate: false }), /credentials/);
    await assert.rejects(assertPublicUrl('http://127.0.0.1:9/', { allowPrivate: false }), UrlRefusedError);
    await assert.rejects(assertPublicUrl('http://[::1]/', { allowPrivate: false }), UrlRefusedError);
    await assert.rejects(assertPublicUrl('http://169.254.169.254/latest/meta-data', { allowPrivate: false }), UrlRefusedError);
    await assert.rejects(assertPublicUrl('http://localhost/', { allowPrivate: false }), UrlRefusedError);
    assert.equal((await assertPublicUrl('http://127.0.0.1:9/', { allowPrivate: true })).port, '9');
  });

  describe('outbound client against a local server', () => {
    let server: http.Server;
    let base: string;
    before(async () => {
      server = http.createServer((req, res) => {
        if (req.url === '/redirect-private') {
          res.writeHead(302, { location: 'http://127.0.0.1:1/secret' }).end();
        } else if (req.url === '/big') {
          res.writeHead(200).end('x'.repeat(10_000));
        } else if (req.url === '/redirect') {
          res.writeHead(302, { location: '/big' }).end();
        } else res.writeHead(200).end('ok');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(() => server.close());

    it('refuses a loopback URL when private URLs are not allowed', async () => {
      const client = createOutboundClient({ allowPrivate: false });
      await assert.rejects(client.request(`${base}/`, { timeoutMs: 2000, maxBytes: 100 }), UrlRefusedError);
      await client.close();
    });

    it('refuses at connect time a host whose address changed after the check (DNS rebinding)', async () => {
      // The check's lookup answers a public address; the connection's own lookup finds 127.0.0.1.
      const lookup = mock.method(dns.promises, 'lookup', async () => [{ address: '93.184.216.34', family: 4 }]);
      const client = createOutboundClient({ allowPrivate: false });
      try {
        await assert.rejects(client.request(`${base.replace('127.0.0.1', 'localhost')}/`, { timeoutMs: 2000, maxBytes: 100 }), (error: unknown) => {
          assert.ok(error instanceof UrlRefusedError, `expected UrlRefusedError, got ${String(error)}`);
          assert.match((error as Error).message, /non-public address 127\.0\.0\.1/);
          return true;
        });
      } finally {
        lookup.mock.restore();
        await client.close();
      }
    });

    it('caps the body, follows a redirect and re-checks it', async () => {
      const client = createOutboundClient({ allowPrivate: true });
      const res = await client.request(`${base}/redirect`, { timeoutMs: 2000, maxBytes: 2048 });
      assert.equal(res.status, 200);
      assert.equal(res.body.length, 2048);
      assert.equal(res.truncated, true);
      assert.ok(res.url.endsWith('/big'));
      await client.close();
    });
  });
});
