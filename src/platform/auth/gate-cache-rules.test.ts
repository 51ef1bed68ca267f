import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { manualClock } from '../clock.ts';
import { createGateCache, type KeyVerdict, type MembershipVerdict, type SessionVerdict } from './gate-cache.ts';

// The gate cache's own rules (gate-cache.ts), without a database: what it keeps and serves, when
// it serves nothing, how many entries it holds, which entries each invalidation drops, and that a
// lookup begun before an invalidation stores nothing. gate-cache.test.ts drives the same cache
// through the app.

const keyOf = (id: string, workspaceId = 'ws_a'): KeyVerdict => ({ id, name: `key ${id}`, workspaceId, scope: 'write' });
const sessionOf = (sessionId: string, userId: string): SessionVerdict => ({ sessionId, userId, email: `${userId}@example.test`, name: null, expiresAtMs: Date.parse('2030-01-01') });
const memberOf = (userId: string, workspaceId: string): MembershipVerdict => ({ userId, workspaceId, role: 'admin' });

function cacheOf(options: { ttlSeconds?: number; maxEntries?: number; trusted?: () => boolean } = {}) {
  const clock = manualClock();
  return { clock, cache: createGateCache({ ttlSeconds: 60, clock, ...options }) };
}

describe('the gate cache keeps and serves', () => {
  it('serves the key, session and membership verdicts it was given, with no trust function given', () => {
    const { cache } = cacheOf();
    cache.putKey('hash-a', keyOf('key_a'), cache.generation);
    cache.putSession(sessionOf('ses_a', 'usr_a'), cache.generation);
    cache.putMembership('ws_a', memberOf('usr_a', 'ws_a'), cache.generation);
    cache.putMembership(undefined, memberOf('usr_a', 'ws_home'), cache.generation);
    assert.deepEqual(cache.key('hash-a'), keyOf('key_a'));
    assert.deepEqual(cache.session('ses_a'), sessionOf('ses_a', 'usr_a'));
    assert.deepEqual(cache.membership('usr_a', 'ws_a'), memberOf('usr_a', 'ws_a'));
    assert.deepEqual(cache.membership('usr_a', undefined), memberOf('usr_a', 'ws_home'));
  });

  it("keeps a user's membership of each workspace apart, and the default workspace's apart from them", () => {
    const { cache } = cacheOf();
    cache.putMembership('ws_a', memberOf('usr_a', 'ws_a'), cache.generation);
    assert.equal(cache.membership('usr_a', 'ws_b'), undefined);
    assert.equal(cache.membership('usr_a', undefined), undefined);
    assert.equal(cache.membership('usr_b', 'ws_a'), undefined);
  });

  it('reads an empty workspace id as the default workspace, as the gate does', () => {
    const { cache } = cacheOf();
    cache.putMembership(undefined, memberOf('usr_a', 'ws_home'), cache.generation);
    assert.deepEqual(cache.membership('usr_a', ''), memberOf('usr_a', 'ws_home'));
  });

  it('counts its entries of every kind in size', () => {
    const { cache } = cacheOf();
    cache.putKey('hash-a', keyOf('key_a'), cache.generation);
    cache.putSession(sessionOf('ses_a', 'usr_a'), cache.generation);
    cache.putSession(sessionOf('ses_b', 'usr_a'), cache.generation);
    cache.putMembership('ws_a', memberOf('usr_a', 'ws_a'), cache.generation);
    assert.equal(cache.size, 4);
  });

  it('holds at most maxEntries of a kind, the oldest going first', () => {
    const { cache } = cacheOf({ maxEntries: 2 });
    for (const id of ['1', '2']) cache.putKey(`hash-${id}`, keyOf(`key_${id}`), cache.generation);
    assert.equal(cache.size, 2, 'as many as maxEntries are kept');
    cache.putKey('hash-3', keyOf('key_3'), cache.generation);
    assert.equal(cache.size, 2);
    assert.equal(cache.key('hash-1'), undefined, 'the oldest went');
    assert.deepEqual(cache.key('hash-2'), keyOf('key_2'));
    assert.deepEqual(cache.key('hash-3'), keyOf('key_3'));
    cache.putSession(sessionOf('ses_a', 'usr_a'), cache.generation);
    assert.equal(cache.size, 3, 'the bound is per kind');
  });

  it('keeps many entries of a kind when maxEntries is not given', () => {
    const { cache } = cacheOf();
    for (let i = 0; i < 100; i++) cache.putKey(`hash-${i}`, keyOf(`key_${i}`), cache.generation);
    assert.equal(cache.size, 100);
    assert.deepEqual(cache.key('hash-0'), keyOf('key_0'));
  });
});

describe('the gate cache serves nothing', () => {
  it('with AUTH_CACHE_TTL_SECONDS=0: it keeps nothing', () => {
    const { cache } = cacheOf({ ttlSeconds: 0 });
    cache.putKey('hash-a', keyOf('key_a'), cache.generation);
    assert.equal(cache.size, 0);
    assert.equal(cache.key('hash-a'), undefined);
  });

  it('while its bus does not trust it: it neither keeps nor serves, and serves again once trusted', () => {
    let trusted = false;
    const { cache } = cacheOf({ trusted: () => trusted });
    cache.putKey('hash-a', keyOf('key_a'), cache.generation);
    assert.equal(cache.size, 0, 'nothing kept while untrusted');
    trusted = true;
    assert.equal(cache.key('hash-a'), undefined);
    cache.putKey('hash-a', keyOf('key_a'), cache.generation);
    assert.deepEqual(cache.key('hash-a'), keyOf('key_a'));
    trusted = false;
    assert.equal(cache.key('hash-a'), undefined, 'what it keeps is not served while untrusted');
  });

  it('once an entry is AUTH_CACHE_TTL_SECONDS old', () => {
    const { cache, clock } = cacheOf({ ttlSeconds: 30 });
    cache.putKey('hash-a', keyOf('key_a'), cache.generation);
    clock.advance(29_999);
    assert.deepEqual(cache.key('hash-a'), keyOf('key_a'));
    clock.advance(1);
    assert.equal(cache.key('hash-a'), undefined);
    assert.equal(cache.size, 0, 'the stale entry is dropped');
  });

  it('of what it held before clear()', () => {
    const { cache } = cacheOf();
    cache.putKey('hash-a', keyOf('key_a'), cache.generation);
    cache.putSession(sessionOf('ses_a', 'usr_a'), cache.generation);
    cache.putMembership('ws_a', memberOf('usr_a', 'ws_a'), cache.generation);
    cache.clear();
    assert.equal(cache.size, 0);
    assert.equal(cache.key('hash-a'), undefined);
  });
});

describe('a lookup begun before an invalidation stores nothing', () => {
  it('when an event was applied meanwhile', () => {
    const { cache } = cacheOf();
    const since = cache.generation;
    cache.apply([{ kind: 'session', id: 'ses_other' }]);
    cache.putKey('hash-a', keyOf('key_a'), since);
    assert.equal(cache.key('hash-a'), undefined);
  });

  it('when the cache was cleared and an event applied meanwhile, in either order', () => {
    const { cache } = cacheOf();
    const before = cache.generation;
    cache.apply([{ kind: 'key', id: 'key_other' }]);
    cache.clear();
    cache.putKey('hash-a', keyOf('key_a'), before);
    assert.equal(cache.key('hash-a'), undefined, 'applied, then cleared');
    const later = cache.generation;
    cache.clear();
    cache.apply([{ kind: 'key', id: 'key_other' }]);
    cache.putKey('hash-a', keyOf('key_a'), later);
    assert.equal(cache.key('hash-a'), undefined, 'cleared, then applied');
  });
});

describe('an invalidation drops what it names, and only that', () => {
  function filled() {
    const { cache } = cacheOf();
    cache.putKey('hash-a1', keyOf('key_a1', 'ws_a'), cache.generation);
    cache.putKey('hash-a2', keyOf('key_a2', 'ws_a'), cache.generation);
    cache.putKey('hash-b1', keyOf('key_b1', 'ws_b'), cache.generation);
    cache.putSession(sessionOf('ses_u1', 'usr_u'), cache.generation);
    cache.putSession(sessionOf('ses_v1', 'usr_v'), cache.generation);
    cache.putMembership('ws_a', memberOf('usr_u', 'ws_a'), cache.generation);
    cache.putMembership('ws_b', memberOf('usr_u', 'ws_b'), cache.generation);
    cache.putMembership('ws_a', memberOf('usr_v', 'ws_a'), cache.generation);
    cache.putMembership('ws_b', memberOf('usr_v', 'ws_b'), cache.generation);
    return cache;
  }
  type Cache = ReturnType<typeof filled>;
  const kept = (cache: Cache) => ({
    keys: ['hash-a1', 'hash-a2', 'hash-b1'].filter((hash) => cache.key(hash)),
    sessions: ['ses_u1', 'ses_v1'].filter((id) => cache.session(id)),
    memberships: [
      ['usr_u', 'ws_a'],
      ['usr_u', 'ws_b'],
      ['usr_v', 'ws_a'],
      ['usr_v', 'ws_b'],
    ]
      .filter(([user, workspace]) => cache.membership(user, workspace))
      .map((pair) => pair.join('@')),
  });
  const everything = { keys: ['hash-a1', 'hash-a2', 'hash-b1'], sessions: ['ses_u1', 'ses_v1'], memberships: ['usr_u@ws_a', 'usr_u@ws_b', 'usr_v@ws_a', 'usr_v@ws_b'] };

  it('key: that key', () => {
    const cache = filled();
    cache.apply([{ kind: 'key', id: 'key_a1' }]);
    assert.deepEqual(kept(cache), { ...everything, keys: ['hash-a2', 'hash-b1'] });
  });

  it('session: that session', () => {
    const cache = filled();
    cache.apply([{ kind: 'session', id: 'ses_u1' }]);
    assert.deepEqual(kept(cache), { ...everything, sessions: ['ses_v1'] });
  });

  it("user: the user's sessions and memberships", () => {
    const cache = filled();
    cache.apply([{ kind: 'user', id: 'usr_u' }]);
    assert.deepEqual(kept(cache), { ...everything, sessions: ['ses_v1'], memberships: ['usr_v@ws_a', 'usr_v@ws_b'] });
  });

  it("member: that user's membership of that workspace", () => {
    const cache = filled();
    cache.apply([{ kind: 'member', workspaceId: 'ws_a', userId: 'usr_u' }]);
    assert.deepEqual(kept(cache), { ...everything, memberships: ['usr_u@ws_b', 'usr_v@ws_a', 'usr_v@ws_b'] });
  });

  it("workspace: the workspace's keys and memberships", () => {
    const cache = filled();
    cache.apply([{ kind: 'workspace', id: 'ws_a' }]);
    assert.deepEqual(kept(cache), { ...everything, keys: ['hash-b1'], memberships: ['usr_u@ws_b', 'usr_v@ws_b'] });
  });

  it("webhook_endpoint: nothing of the gate's; several events at once: each of them", () => {
    const cache = filled();
    cache.apply([{ kind: 'webhook_endpoint', workspaceId: 'ws_a' }]);
    assert.deepEqual(kept(cache), everything);
    cache.apply([
      { kind: 'key', id: 'key_b1' },
      { kind: 'session', id: 'ses_v1' },
    ]);
    assert.deepEqual(kept(cache), { ...everything, keys: ['hash-a1', 'hash-a2'], sessions: ['ses_u1'] });
  });
});
