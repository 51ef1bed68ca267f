import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { normaliseOrigin, originAllowed } from './origin.ts';

// The Origin rule of the public widget endpoints: a page is admitted when its origin is exactly
// one of allowed_origins (scheme, host and port), never by a prefix, a suffix or a lookalike.

const ALLOWED = ['https://shop.example'];
const API_HOST = 'api.platform.test';

describe('originAllowed', () => {
  const admitted = ['https://shop.example', 'https://SHOP.example', 'https://shop.example:443', 'https://shop.example/'];
  for (const origin of admitted) {
    it(`admits ${origin}`, () => assert.equal(originAllowed(ALLOWED, origin, API_HOST), true));
  }

  const refused = [
    'https://shop.example.evil.net',
    'https://shop.examplex',
    'https://shop.exampl',
    'https://evil.shop.example',
    'https://shop.example:8443',
    'http://shop.example',
    'https://shop.example@evil.net',
    'https://shop.example/path',
    'null',
    '',
  ];
  for (const origin of refused) {
    it(`refuses ${JSON.stringify(origin)}`, () => assert.equal(originAllowed(ALLOWED, origin, API_HOST), false));
  }

  it('an empty list admits any page; no Origin (server-side use) is admitted', () => {
    assert.equal(originAllowed([], 'https://anywhere.example', API_HOST), true);
    assert.equal(originAllowed(ALLOWED, undefined, API_HOST), true);
  });

  it('the platform own pages: same host as the request, port included', () => {
    assert.equal(originAllowed(ALLOWED, 'https://api.platform.test', API_HOST), true);
    assert.equal(originAllowed(ALLOWED, 'https://api.platform.test.evil.net', API_HOST), false);
    assert.equal(originAllowed(ALLOWED, 'https://api.platform.test:8443', API_HOST), false);
    assert.equal(originAllowed(ALLOWED, 'https://api.platform.test', undefined), false);
  });
});

describe('normaliseOrigin', () => {
  it('scheme://host[:port], lower-cased, default port dropped; anything else is no origin', () => {
    assert.equal(normaliseOrigin('HTTPS://Shop.Example:443'), 'https://shop.example');
    assert.equal(normaliseOrigin('http://shop.example:8080'), 'http://shop.example:8080');
    // Pasted with the blanks around it (a no-break space is one the URL parser itself does not strip).
    assert.equal(normaliseOrigin('\u00a0 https://shop.example \u00a0'), 'https://shop.example');
    for (const bad of ['ftp://shop.example', 'https://u:p@shop.example', 'https://u@shop.example', 'https://:p@shop.example', 'https://shop.example/a', 'https://shop.example?q', 'https://shop.example#h', 'shop.example']) {
      assert.equal(normaliseOrigin(bad), undefined, bad);
    }
  });
});
