import type { Clock } from '../clock.ts';
import type { Role, Scope } from './access.ts';

// The request gate's verdicts, kept in process so an authenticated request costs no query of
// its own: an API key by its hash, a session by its id, a user's membership by the workspace
// asked for. Only positive verdicts are kept (an unknown or revoked credential is looked up every
// time, and limited per IP). Every change that could turn a verdict (a key revoked or renamed, a
// session ended, a password or profile changed, a role changed, a member removed, a workspace
// deleted) publishes a GateEvent through the gate bus (gate-bus.ts) after its commit: this
// cache and those of every other instance drop the entries it names at once. AUTH_CACHE_TTL_SECONDS
// bounds an entry's life as the safety net.
//
// A lookup that started before an invalidation must not store what it read (it may have read
// the row before the change committed): `generation` counts invalidations, a lookup notes it
// before its query and stores only if it has not moved.

export type GateEvent =
  | { kind: 'key'; id: string }
  | { kind: 'session'; id: string }
  /** Every session and membership of the user (password, email or name changed). */
  | { kind: 'user'; id: string }
  | { kind: 'member'; workspaceId: string; userId: string }
  | { kind: 'workspace'; id: string }
  /** The workspace's tenant webhook endpoint (not the gate's: the outbox's cache on the same bus). */
  | { kind: 'webhook_endpoint'; workspaceId: string };

/** What the gate bus clears: this cache, and any other cache that rides the same bus. */
export interface InvalidatedCache {
  /** Drops what the events name (and ignores the kinds it does not keep). */
  apply(events: readonly GateEvent[]): void;
  /** Forgets everything (the bus lost or regained its connection). */
  clear(): void;
}

export interface KeyVerdict {
  id: string;
  name: string;
  workspaceId: string;
  scope: Scope;
}

export interface SessionVerdict {
  sessionId: string;
  userId: string;
  email: string;
  name: string | null;
  expiresAtMs: number;
}

export interface MembershipVerdict {
  userId: string;
  workspaceId: string;
  role: Role;
}

interface Entry<T> {
  value: T;
  /** By the injected clock. */
  staleAtMs: number;
}

const DEFAULT_MAX_ENTRIES = 20_000;

export function createGateCache(options: { ttlSeconds: number; clock: Clock; maxEntries?: number; trusted?: () => boolean }) {
  const ttlMs = options.ttlSeconds * 1000;
  const maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
  const keys = new Map<string, Entry<KeyVerdict>>();
  const sessions = new Map<string, Entry<SessionVerdict>>();
  const memberships = new Map<string, Entry<MembershipVerdict>>();
  let generation = 0;
  const trusted = options.trusted ?? (() => true);

  const usable = () => ttlMs > 0 && trusted();

  function get<T>(map: Map<string, Entry<T>>, id: string): T | undefined {
    if (!usable()) return undefined;
    const entry = map.get(id);
    if (!entry) return undefined;
    if (options.clock.now().getTime() >= entry.staleAtMs) {
      map.delete(id);
      return undefined;
    }
    return entry.value;
  }

  function put<T>(map: Map<string, Entry<T>>, id: string, value: T, since: number): void {
    if (since !== generation || !usable()) return;
    // Oldest first out: a Map iterates in insertion order.
    if (map.size >= maxEntries) map.delete(map.keys().next().value as string);
    map.set(id, { value, staleAtMs: options.clock.now().getTime() + ttlMs });
  }

  function dropWhere<T>(map: Map<string, Entry<T>>, match: (value: T) => boolean): void {
    for (const [id, entry] of map) if (match(entry.value)) map.delete(id);
  }

  const membershipId = (userId: string, requested: string | undefined) => `${userId}\n${requested ?? ''}`;

  return {
    /** Note before a lookup; pass to put* after it. */
    get generation(): number {
      return generation;
    },
    key: (hash: string) => get(keys, hash),
    putKey: (hash: string, verdict: KeyVerdict, since: number) => put(keys, hash, verdict, since),
    session: (sessionId: string) => get(sessions, sessionId),
    putSession: (verdict: SessionVerdict, since: number) => put(sessions, verdict.sessionId, verdict, since),
    /** `requested`: the workspace id asked for; undefined for the user's default workspace. */
    membership: (userId: string, requested: string | undefined) => get(memberships, membershipId(userId, requested)),
    putMembership: (requested: string | undefined, verdict: MembershipVerdict, since: number) => put(memberships, membershipId(verdict.userId, requested), verdict, since),

    /** Drops what the events name. Invalidations are rare: a scan of the maps is fine. */
    apply(events: readonly GateEvent[]): void {
      generation++;
      for (const event of events) {
        switch (event.kind) {
          case 'key':
            dropWhere(keys, (v) => v.id === event.id);
            break;
          case 'session':
            sessions.delete(event.id);
            break;
          case 'user':
            dropWhere(sessions, (v) => v.userId === event.id);
            dropWhere(memberships, (v) => v.userId === event.id);
            break;
          case 'member':
            dropWhere(memberships, (v) => v.userId === event.userId && v.workspaceId === event.workspaceId);
            break;
          case 'workspace':
            dropWhere(keys, (v) => v.workspaceId === event.id);
            dropWhere(memberships, (v) => v.workspaceId === event.id);
            break;
          case 'webhook_endpoint':
            break;
        }
      }
    },
    /** Forgets everything (the bus lost or regained its connection). */
    clear(): void {
      generation++;
      keys.clear();
      sessions.clear();
      memberships.clear();
    },
    get size(): number {
      return keys.size + sessions.size + memberships.size;
    },
  };
}

export type GateCache = ReturnType<typeof createGateCache>;
