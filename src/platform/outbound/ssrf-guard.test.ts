import assert from 'node:assert/strict';
import dns from 'node:dns';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { after, before, describe, it, mock } from 'node:test';
import { AppError } from '../errors.ts';
import { assertPublicUrl, assertUrlField, createOutboundClient, isPublicAddress, UrlRefusedError } from './ssrf-guard.ts';

/**
 * A fake internet for the guard with private URLs refused: `hosts` resolve (in both lookups the
 * guard makes: the check's dns.promises.lookup and the connection's dns.lookup) to their addresses
 * (several: a name with several A records, in that order; none: the name does not exist, ENOTFOUND
 * as the real resolver says it), and a connection to an address in `routes` reaches the mapped one
 * instead, once the guard has approved it. Like the real resolver, a lookup without `all` answers
 * one address. Other names and addresses are left to the real resolver and network.
 */
function fakeInternet(hosts: Record<string, string | string[]>, routes: Record<string, string>) {
  const answer = (host: string) => (host in hosts ? [hosts[host]].flat().map((address) => ({ address, family: 4 })) : undefined);
  const notFound = (host: string) => Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND', hostname: host });
  const realPromisesLookup = dns.promises.lookup;
  const realLookup = dns.lookup;
  const realConnect = net.connect;
  type Callback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;
  const mocks = [
    mock.method(dns.promises, 'lookup', async (host: string, options: dns.LookupOptions) => {
      const found = answer(host);
      if (!found) return realPromisesLookup(host, options);
      if (found.length === 0) throw notFound(host);
      return options?.all ? found : found[0];
    }),
    mock.method(dns, 'lookup', (host: string, options: dns.LookupOptions, callback: Callback) => {
      const found = answer(host);
      if (!found) return realLookup(host, options, callback as never);
      if (found.length === 0) return callback(notFound(host), '');
      return options.all ? callback(null, found) : callback(null, found[0].address, 4);
    }),
    mock.method(net, 'connect', (options: net.NetConnectOpts & { lookup?: net.LookupFunction }, ...rest: unknown[]) => {
      const lookup = options.lookup;
      if (!lookup) return (realConnect as (...args: unknown[]) => net.Socket)(options, ...rest);
      const routed: net.LookupFunction = (host, lookupOptions, callback) =>
        lookup(host, lookupOptions, (err, address, family) => {
          if (err) return callback(err, address, family);
          if (Array.isArray(address)) return callback(null, address.map((a) => ({ ...a, address: routes[a.address] ?? a.address })));
          return callback(null, routes[address] ?? address, family);
        });
      return (realConnect as (...args: unknown[]) => net.Socket)({ ...options, lookup: routed }, ...rest);
    }),
  ];
  return {
    restore() {
      for (const m of mocks) m.mock.restore();
    },
  };
}

describe('SSRF guard', () => {
  it('classifies addresses', () => {
    for (const a of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', 'fc00::1', '::ffff:127.0.0.1', '224.0.0.1']) {
      assert.equal(isPublicAddress(a), false, a);
    }
    for (const a of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111']) assert.equal(isPublicAddress(a), true, a);
    for (const notAnAddress of ['example.com', '', '999.8.8.8', 'fe80::1::2']) assert.equal(isPublicAddress(notAnAddress), false, notAnAddress);
  });

  // Every IPv6 form that carries an IPv4 address is refused whole, whatever the address it
  // embeds (docs/decisions.md); an ordinary public IPv6 address still passes.
  const EMBEDDED_IPV4: Array<[form: string, addresses: string[]]> = [
    ['IPv4-compatible ::/96', ['::127.0.0.1', '::7f00:1', '::10.0.0.1', '::169.254.169.254', '::8.8.8.8', '::0.0.0.2']],
    ['IPv4-mapped ::ffff:0:0/96', ['::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '::ffff:169.254.169.254', '::ffff:8.8.8.8']],
    ['IPv4-translated ::ffff:0:0:0/96', ['::ffff:0:127.0.0.1', '::ffff:0:a00:1', '::ffff:0:8.8.8.8']],
    ['NAT64 64:ff9b::/96', ['64:ff9b::127.0.0.1', '64:ff9b::7f00:1', '64:ff9b::a9fe:a9fe', '64:ff9b::8.8.8.8']],
    ['NAT64 local-use 64:ff9b:1::/48', ['64:ff9b:1::a00:1', '64:ff9b:1:7f00:1::', '64:ff9b:1:ffff::808:808']],
    ['6to4 2002::/16', ['2002:7f00:1::1', '2002:a00:1::', '2002:a9fe:a9fe::1', '2002:c0a8:101::1', '2002:808:808::1']],
    ['Teredo 2001::/32', ['2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001::1', '2001:0:7f00:1::', '2001:0:a00:1:0:0:f5ff:fffe']],
  ];
  const OTHER_NON_PUBLIC_V6 = ['::', '::1', 'fe80::1', 'fc00::1', 'fd12:3456::1', 'ff02::1', 'fec0::1', '100::1', '2001:db8::1', '2001:2::1', '5f00::1', '3fff::1'];
  const PUBLIC = ['8.8.8.8', '2606:4700:4700::1111', '2001:4860:4860::8888', '2a00:1450:4001:81c::200e', '2003::1'];

  describe('refuses every IPv6 form embedding an IPv4 address, as an address and as a URL host', () => {
    for (const [form, addresses] of EMBEDDED_IPV4) {
      it(form, async () => {
        for (const address of addresses) {
          assert.equal(isPublicAddress(address), false, address);
          await assert.rejects(assertPublicUrl(`http://[${address}]:3799/`, { allowPrivate: false }), UrlRefusedError, address);
        }
      });
    }
    it('other non-public IPv6 ranges', async () => {
      for (const address of OTHER_NON_PUBLIC_V6) {
        assert.equal(isPublicAddress(address), false, address);
        await assert.rejects(assertPublicUrl(`http://[${address}]:3799/`, { allowPrivate: false }), UrlRefusedError, address);
      }
    });
    it('public addresses pass', async () => {
      for (const address of PUBLIC) {
        assert.equal(isPublicAddress(address), true, address);
        const host = address.includes(':') ? `[${address}]` : address;
        assert.equal((await assertPublicUrl(`http://${host}:3799/`, { allowPrivate: false })).port, '3799');
      }
    });
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

  it('refuses what is not an http(s) URL without credentials, saying why', async () => {
    const refusal = (pattern: RegExp) => (error: unknown) => {
      assert.ok(error instanceof UrlRefusedError, `expected UrlRefusedError, got ${String(error)}`);
      assert.equal(error.name, 'UrlRefusedError');
      assert.match(error.message, pattern);
      return true;
    };
    await assert.rejects(assertPublicUrl('not a url', { allowPrivate: false }), refusal(/is not a valid URL/));
    await assert.rejects(assertPublicUrl('not a url', { allowPrivate: true }), refusal(/is not a valid URL/));
    await assert.rejects(assertPublicUrl('http://user@8.8.8.8/', { allowPrivate: false }), refusal(/credentials/));
    await assert.rejects(assertPublicUrl('http://:secret@8.8.8.8/', { allowPrivate: false }), refusal(/credentials/));
  });

  it('refuses a host that does not resolve, naming it', async () => {
    const internet = fakeInternet({ 'gone.example.com': [] }, {});
    try {
      await assert.rejects(assertPublicUrl('https://gone.example.com/hook', { allowPrivate: false }), (error: unknown) => {
        assert.ok(error instanceof UrlRefusedError, `expected UrlRefusedError, got ${String(error)}`);
        assert.match(error.message, /host gone\.example\.com does not resolve/);
        return true;
      });
    } finally {
      internet.restore();
    }
  });

  it('assertUrlField: a refused URL is a 422 naming the field and the reason; an allowed one passes', async () => {
    await assert.rejects(assertUrlField('webhook.url', 'http://127.0.0.1/hook', { allowPrivate: false }), (error: unknown) => {
      assert.ok(error instanceof AppError, `expected AppError, got ${String(error)}`);
      assert.equal(error.status, 422);
      assert.equal(error.code, 'validation_failed');
      assert.equal(error.errors?.length, 1);
      assert.equal(error.errors?.[0].path, 'webhook.url');
      assert.match(error.errors?.[0].message ?? '', /^URL points to a private, loopback, link-local or reserved address \(127\.0\.0\.1\)$/);
      return true;
    });
    assert.equal(await assertUrlField('webhook.url', 'http://127.0.0.1/hook', { allowPrivate: true }), undefined);
    assert.equal(await assertUrlField('webhook.url', 'http://8.8.8.8/hook', { allowPrivate: false }), undefined);
  });

  it('refuses a host with a public and a private address, whichever comes first', async () => {
    for (const addresses of [['93.184.216.34', '10.0.0.5'], ['10.0.0.5', '93.184.216.34'], ['93.184.216.34', '8.8.8.8', '169.254.169.254']]) {
      const internet = fakeInternet({ 'mixed.example.com': addresses }, {});
      try {
        await assert.rejects(assertPublicUrl('https://mixed.example.com/hook', { allowPrivate: false }), (error: unknown) => {
          assert.ok(error instanceof UrlRefusedError, `${addresses}: expected UrlRefusedError, got ${String(error)}`);
          assert.match((error as Error).message, /10\.0\.0\.5|169\.254\.169\.254/);
          return true;
        });
      } finally {
        internet.restore();
      }
    }
    const internet = fakeInternet({ 'public.example.com': ['93.184.216.34', '8.8.8.8'] }, {});
    try {
      assert.equal((await assertPublicUrl('https://public.example.com/hook', { allowPrivate: false })).hostname, 'public.example.com');
    } finally {
      internet.restore();
    }
  });

  describe('outbound client against a local server', () => {
    let server: http.Server;
    let base: string;
    let loopHits = 0;
    before(async () => {
      server = http.createServer((req, res) => {
        if (req.url === '/redirect-private') {
          res.writeHead(302, { location: 'http://127.0.0.1:1/secret' }).end();
        } else if (req.url === '/big') {
          res.writeHead(200).end('x'.repeat(10_000));
        } else if (req.url === '/redirect') {
          res.writeHead(302, { location: '/big' }).end();
        } else if (req.url === '/chunks') {
          // Four 1000-byte chunks, each written once the one before has left (so the client
          // usually reads them one by one; the assertions hold however they arrive).
          let sent = 0;
          const next = () => {
            if (sent === 4) return void res.end();
            sent++;
            res.write('c'.repeat(1000), () => setTimeout(next, 5));
          };
          res.writeHead(200);
          next();
        } else if (req.url?.startsWith('/status/')) {
          res.writeHead(Number(req.url.slice('/status/'.length)), { location: '/echo' }).end('not followed');
        } else if (req.url === '/loop') {
          loopHits++;
          res.writeHead(302, { location: '/loop' }).end();
        } else if (req.url === '/echo') {
          let body = '';
          req.on('data', (chunk) => (body += chunk)).on('end', () => {
            res.setHeader('x-twice', ['a=1', 'b=2']);
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ method: req.method, body, userAgent: req.headers['user-agent'] ?? null, custom: req.headers['x-custom'] ?? null }));
          });
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

    it('refuses at connect time a host whose answer holds a private address after a public one', async () => {
      // The check's lookup answers only a public address; the connection's own lookup answers that
      // one and 127.0.0.1, and the public one is routed to the local server: a guard that looked
      // only at the first answer would reach it.
      const hits: string[] = [];
      const target = http.createServer((req, res) => {
        hits.push(req.url ?? '');
        res.writeHead(200).end('reached');
      });
      await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
      const port = (target.address() as AddressInfo).port;
      const internet = fakeInternet({ 'mixed.example.com': ['93.184.216.34', '127.0.0.1'] }, { '93.184.216.34': '127.0.0.1' });
      const check = mock.method(dns.promises, 'lookup', async () => [{ address: '93.184.216.34', family: 4 }]);
      const client = createOutboundClient({ allowPrivate: false });
      try {
        await assert.rejects(client.request(`http://mixed.example.com:${port}/hook`, { timeoutMs: 2000, maxBytes: 100 }), (error: unknown) => {
          assert.ok(error instanceof UrlRefusedError, `expected UrlRefusedError, got ${String(error)}`);
          assert.match((error as Error).message, /non-public address 127\.0\.0\.1/);
          // The code agent functions recognise a refusal by when undici wraps it (agents/functions.ts).
          assert.equal((error as NodeJS.ErrnoException).code, 'EREFUSED_PRIVATE');
          return true;
        });
        assert.deepEqual(hits, [], 'nothing was reached');
      } finally {
        check.mock.restore();
        internet.restore();
        await client.close();
        await new Promise<void>((resolve) => target.close(() => resolve()));
      }
    });

    it('refuses a redirect from a public host to a private address, never reaching it', async () => {
      // A fake internet: `hooks.example.com` resolves (for the check and for the connection) to a
      // public address, and that address is routed to a local server that redirects inward.
      const secretHits: string[] = [];
      const secret = http.createServer((req, res) => {
        secretHits.push(req.url ?? '');
        res.writeHead(200).end('secret');
      });
      await new Promise<void>((resolve) => secret.listen(0, '127.0.0.1', resolve));
      const secretPort = (secret.address() as AddressInfo).port;
      const publicHits: string[] = [];
      const redirector = http.createServer((req, res) => {
        publicHits.push(req.url ?? '');
        const to = req.url === '/to-name' ? `http://localhost:${secretPort}/secret` : `http://127.0.0.1:${secretPort}/secret`;
        res.writeHead(302, { location: to }).end();
      });
      await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
      const publicUrl = `http://hooks.example.com:${(redirector.address() as AddressInfo).port}`;
      const internet = fakeInternet({ 'hooks.example.com': '93.184.216.34' }, { '93.184.216.34': '127.0.0.1' });
      const client = createOutboundClient({ allowPrivate: false });
      try {
        const ok = await client.request(`http://hooks.example.com:${(secret.address() as AddressInfo).port}/public`, { timeoutMs: 2000, maxBytes: 100 });
        assert.equal(ok.status, 200, 'the fake internet reaches the public host through the guard');
        secretHits.length = 0;
        for (const path of ['/to-address', '/to-name']) {
          await assert.rejects(client.request(`${publicUrl}${path}`, { timeoutMs: 2000, maxBytes: 100 }), (error: unknown) => {
            assert.ok(error instanceof UrlRefusedError, `${path}: expected UrlRefusedError, got ${String(error)}`);
            assert.match((error as Error).message, /127\.0\.0\.1|localhost/);
            return true;
          });
        }
        assert.deepEqual(publicHits, ['/to-address', '/to-name'], 'the public host was asked');
        assert.deepEqual(secretHits, [], 'the private address was never reached');
      } finally {
        internet.restore();
        await client.close();
        await new Promise<void>((resolve) => secret.close(() => resolve()));
        await new Promise<void>((resolve) => redirector.close(() => resolve()));
      }
    });

    it('keeps a body up to maxBytes whole, across chunks, and cuts it exactly there', async () => {
      const client = createOutboundClient({ allowPrivate: true });
      try {
        const small = await client.request(`${base}/`, { timeoutMs: 5000, maxBytes: 100 });
        assert.deepEqual([small.status, small.body.toString(), small.truncated], [200, 'ok', false]);
        const exact = await client.request(`${base}/big`, { timeoutMs: 5000, maxBytes: 10_000 });
        assert.deepEqual([exact.body.length, exact.truncated], [10_000, false]);
        const whole = await client.request(`${base}/chunks`, { timeoutMs: 5000, maxBytes: 4000 });
        assert.deepEqual([whole.body.toString(), whole.truncated], ['c'.repeat(4000), false]);
        const cut = await client.request(`${base}/chunks`, { timeoutMs: 5000, maxBytes: 2500 });
        assert.deepEqual([cut.body.toString(), cut.truncated], ['c'.repeat(2500), true]);
      } finally {
        await client.close();
      }
    });

    it('follows a Location only on a 3xx answer', async () => {
      const client = createOutboundClient({ allowPrivate: true });
      try {
        for (const status of [300, 301, 302, 303, 307, 308, 399]) {
          const res = await client.request(`${base}/status/${status}`, { timeoutMs: 5000, maxBytes: 1000 });
          assert.deepEqual([res.status, res.url], [200, `${base}/echo`], `${status}`);
        }
        for (const status of [200, 201, 400, 404]) {
          const res = await client.request(`${base}/status/${status}`, { timeoutMs: 5000, maxBytes: 1000 });
          assert.deepEqual([res.status, res.body.toString(), res.url], [status, 'not followed', `${base}/status/${status}`], `${status}`);
        }
      } finally {
        await client.close();
      }
    });

    it('a redirect keeps the method and body, except 303 and a POST on 301/302, which become a GET without body', async () => {
      const client = createOutboundClient({ allowPrivate: true });
      const cases: Array<[status: number, method: string, expected: string]> = [
        [303, 'PUT', 'GET'],
        [303, 'POST', 'GET'],
        [301, 'POST', 'GET'],
        [302, 'POST', 'GET'],
        [301, 'PUT', 'PUT'],
        [302, 'PUT', 'PUT'],
        [307, 'POST', 'POST'],
        [308, 'POST', 'POST'],
      ];
      try {
        for (const [status, method, expected] of cases) {
          const res = await client.request(`${base}/status/${status}`, { method, body: 'payload', timeoutMs: 5000, maxBytes: 1000 });
          const echoed = JSON.parse(res.body.toString());
          assert.deepEqual([echoed.method, echoed.body], [expected, expected === 'GET' ? '' : 'payload'], `${status} ${method}`);
        }
      } finally {
        await client.close();
      }
    });

    it('follows at most maxRedirects (3 unless said), then answers the last redirect as it is', async () => {
      const client = createOutboundClient({ allowPrivate: true });
      try {
        for (const [maxRedirects, requests] of [[undefined, 4], [0, 1], [2, 3]] as const) {
          loopHits = 0;
          const res = await client.request(`${base}/loop`, { timeoutMs: 5000, maxBytes: 1000, maxRedirects });
          assert.deepEqual([res.status, loopHits], [302, requests], `maxRedirects ${maxRedirects}`);
        }
      } finally {
        await client.close();
      }
    });

    it('sends the user agent and the request headers; answers headers flat, durationMs within the call', async () => {
      const client = createOutboundClient({ allowPrivate: true, userAgent: 'vap-test/1' });
      try {
        const started = performance.now();
        const res = await client.request(`${base}/echo`, { headers: { 'x-custom': 'yes' }, timeoutMs: 5000, maxBytes: 1000 });
        const elapsed = performance.now() - started;
        assert.deepEqual(JSON.parse(res.body.toString()), { method: 'GET', body: '', userAgent: 'vap-test/1', custom: 'yes' });
        assert.equal(res.headers['x-twice'], 'a=1, b=2');
        assert.equal(res.headers['content-type'], 'application/json');
        assert.ok(res.durationMs >= 0 && res.durationMs <= Math.ceil(elapsed), `${res.durationMs} within ${elapsed}`);
      } finally {
        await client.close();
      }
      const plain = createOutboundClient({ allowPrivate: true });
      try {
        const res = await plain.request(`${base}/echo`, { timeoutMs: 5000, maxBytes: 1000 });
        assert.notEqual(JSON.parse(res.body.toString()).userAgent, 'vap-test/1');
      } finally {
        await plain.close();
      }
    });

    it('a closed client sends nothing more', async () => {
      const client = createOutboundClient({ allowPrivate: true });
      assert.equal((await client.request(`${base}/`, { timeoutMs: 5000, maxBytes: 100 })).status, 200);
      await client.close();
      await assert.rejects(client.request(`${base}/`, { timeoutMs: 5000, maxBytes: 100 }));
    });

    it('a host that stops resolving at connect time fails with the resolver error, not a refusal', async () => {
      const internet = fakeInternet({ 'vanished.example.com': [] }, {});
      const check = mock.method(dns.promises, 'lookup', async () => [{ address: '93.184.216.34', family: 4 }]);
      const client = createOutboundClient({ allowPrivate: false });
      try {
        await assert.rejects(client.request('http://vanished.example.com/hook', { timeoutMs: 5000, maxBytes: 100 }), (error: unknown) => {
          const err = error as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
          assert.ok(!(error instanceof UrlRefusedError), 'not a refusal');
          assert.equal(err.code ?? err.cause?.code, 'ENOTFOUND', String(error));
          return true;
        });
      } finally {
        check.mock.restore();
        internet.restore();
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
