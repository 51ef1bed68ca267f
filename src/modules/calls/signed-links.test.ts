import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { manualClock } from '../../platform/clock.ts';
import { createLinkSigner, LINK_TTL_SECONDS } from './signed-links.ts';

// Signed links (signed-links.ts): the exact URL signed (base, path, expiry in unix seconds, hex
// HMAC-SHA256 under a key derived from the secret), the seven days they last, and every way
// verify() refuses a link (expired, another path, another secret, a malformed expiry or signature).

const T0 = new Date('2026-11-23T10:00:00.000Z');
const SECRET = 'jwt-secret-of-the-app';
const BASE = 'https://api.example.test';
const PATH = '/v1/calls/call_1/recording.mp3';

/** The signature as the contract defines it, computed here independently. */
function macOf(path: string, expires: number | string, secret = SECRET): string {
  const key = createHmac('sha256', secret).update('signed-links-v1').digest();
  return createHmac('sha256', key).update(`${path}\n${expires}`).digest('hex');
}

function rig(secret = SECRET) {
  const clock = manualClock(T0);
  return { clock, signer: createLinkSigner({ secret, publicBaseUrl: BASE, clock }) };
}

/** The expiry and signature of a signed URL. */
function partsOf(url: string) {
  const parsed = new URL(url);
  return { path: parsed.pathname, expires: parsed.searchParams.get('expires') ?? undefined, signature: parsed.searchParams.get('signature') ?? undefined };
}

describe('sign', () => {
  it('the absolute URL: base, path, expiry now + 7 days in unix seconds, the HMAC of path and expiry', () => {
    const { signer } = rig();
    assert.equal(LINK_TTL_SECONDS, 604_800);
    const expires = T0.getTime() / 1000 + 604_800;
    assert.equal(signer.sign(PATH), `${BASE}${PATH}?expires=${expires}&signature=${macOf(PATH, expires)}`);
  });

  it('the expiry is whole seconds, rounded down; a given TTL replaces the default', () => {
    const { clock, signer } = rig();
    clock.advance(999);
    const expires = T0.getTime() / 1000 + 60;
    assert.equal(signer.sign(PATH, 60), `${BASE}${PATH}?expires=${expires}&signature=${macOf(PATH, expires)}`);
  });

  it('another secret signs differently', () => {
    assert.notEqual(partsOf(rig('other').signer.sign(PATH)).signature, partsOf(rig().signer.sign(PATH)).signature);
  });
});

describe('verify', () => {
  it('true for its own link until the second it expires, false a millisecond after', () => {
    const { clock, signer } = rig();
    const { expires, signature } = partsOf(signer.sign(PATH, 10));
    assert.equal(signer.verify(PATH, expires, signature), true);
    clock.set(new Date(T0.getTime() + 10_000));
    assert.equal(signer.verify(PATH, expires, signature), true, 'at the expiry itself');
    clock.advance(1);
    assert.equal(signer.verify(PATH, expires, signature), false);
  });

  it('false for another path, another secret, another expiry', () => {
    const { signer } = rig();
    const { expires, signature } = partsOf(signer.sign(PATH));
    assert.equal(signer.verify('/v1/calls/call_2/recording.mp3', expires, signature), false);
    assert.equal(rig('other').signer.verify(PATH, expires, signature), false);
    assert.equal(signer.verify(PATH, String(Number(expires) + 1), signature), false);
    assert.equal(signer.verify(PATH, expires, macOf(PATH, Number(expires), 'other')), false);
  });

  it('false when expiry or signature is missing or empty', () => {
    const { signer } = rig();
    const { expires, signature } = partsOf(signer.sign(PATH));
    assert.equal(signer.verify(PATH, undefined, signature), false);
    assert.equal(signer.verify(PATH, expires, undefined), false);
    assert.equal(signer.verify(PATH, '', signature), false);
    assert.equal(signer.verify(PATH, expires, ''), false);
  });

  it('an expiry of up to 12 digits, digits only: anything else is refused even with its own valid HMAC', () => {
    const { signer } = rig();
    // 12 digits (year 5138) verify; 13 do not, however well signed.
    const twelve = partsOf(signer.sign(PATH, 100_000_000_000));
    assert.equal(twelve.expires?.length, 12);
    assert.equal(signer.verify(PATH, twelve.expires, twelve.signature), true);
    const thirteen = partsOf(signer.sign(PATH, 1_000_000_000_000));
    assert.equal(thirteen.expires?.length, 13);
    assert.equal(signer.verify(PATH, thirteen.expires, thirteen.signature), false);
    // Not a number: Number() is NaN, never "expired", and the HMAC of "NaN" would match.
    for (const expires of ['abc', '9999999999x', 'x9999999999', '1e11']) assert.equal(signer.verify(PATH, expires, macOf(PATH, Number(expires))), false, expires);
  });

  it('a signature of exactly 64 lower-case hex digits: upper case, longer, or with a non-hex prefix is refused', () => {
    const { signer } = rig();
    const { expires, signature } = partsOf(signer.sign(PATH));
    assert.ok(signature);
    assert.equal(signer.verify(PATH, expires, signature.toUpperCase()), false);
    assert.equal(signer.verify(PATH, expires, `${signature}00`), false);
    assert.equal(signer.verify(PATH, expires, `zz${signature}`), false);
    assert.equal(signer.verify(PATH, expires, signature.slice(0, 62)), false);
  });
});
