import type { GateEvent } from '../auth/gate-cache.ts';
import type { Clock } from '../clock.ts';

// Each workspace's tenant webhook endpoint as the emitter routes by it ({url, events}, or none),
// kept in process for emitAlone: a live call emits a transcript line per turn, and on PGlite the
// query that found (usually) no endpoint ran on the event loop every time. "None" is kept too:
// it is the common answer. The entry is dropped when the endpoint changes: the webhooks service
// publishes a `webhook_endpoint` event after its commit, a deleted workspace its `workspace`
// event, both through the gate bus (auth/gate-bus.ts), which clears this cache beside the gate's
// on every instance. AUTH_CACHE_TTL_SECONDS bounds an entry's life as the safety net, as for the
// gate (0 turns this cache off too).
//
// A lookup that started before an invalidation must not store what it read: `generation`
// counts invalidations; a lookup notes it before its query and stores only if it has not moved.

export interface TenantEndpoint {
  url: string;
  events: string[];
}

interface Entry {
  /** null: the workspace has no tenant webhook. */
  endpoint: TenantEndpoint | null;
  /** By the injected clock. */
  staleAtMs: number;
}

const DEFAULT_MAX_ENTRIES = 10_000;

export function createTenantEndpointCache(options: { ttlSeconds: number; clock: Clock; maxEntries?: number; trusted?: () => boolean }) {
  const ttlMs = options.ttlSeconds * 1000;
  const maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
  const trusted = options.trusted ?? (() => true);
  const entries = new Map<string, Entry>();
  let generation = 0;

  const usable = () => ttlMs > 0 && trusted();

  function cached(workspaceId: string): Entry | undefined {
    if (!usable()) return undefined;
    const entry = entries.get(workspaceId);
    if (!entry) return undefined;
    if (options.clock.now().getTime() >= entry.staleAtMs) {
      entries.delete(workspaceId);
      return undefined;
    }
    // Least recently used first out: a hit moves the entry to the end of the Map's order.
    entries.delete(workspaceId);
    entries.set(workspaceId, entry);
    return entry;
  }

  function store(workspaceId: string, endpoint: TenantEndpoint | null, since: number): void {
    if (since !== generation || !usable()) return;
    if (!entries.has(workspaceId) && entries.size >= maxEntries) entries.delete(entries.keys().next().value as string);
    entries.set(workspaceId, { endpoint, staleAtMs: options.clock.now().getTime() + ttlMs });
  }

  return {
    /**
     * The workspace's endpoint (null: none), from the cache or through `read`, which must read
     * committed rows (never a caller's open transaction: its change could still roll back).
     */
    async lookup(workspaceId: string, read: () => Promise<TenantEndpoint | undefined>): Promise<TenantEndpoint | null> {
      const hit = cached(workspaceId);
      if (hit) return hit.endpoint;
      const since = generation;
      const row = await read();
      const endpoint = row ? { url: row.url, events: row.events } : null;
      store(workspaceId, endpoint, since);
      return endpoint;
    },

    /** What the cache holds for the workspace (undefined: nothing usable), without reading. */
    peek: (workspaceId: string): TenantEndpoint | null | undefined => cached(workspaceId)?.endpoint,

    /** Drops the workspaces the events name; the gate's own kinds are not kept here. */
    apply(events: readonly GateEvent[]): void {
      for (const event of events) {
        const workspaceId = event.kind === 'webhook_endpoint' ? event.workspaceId : event.kind === 'workspace' ? event.id : undefined;
        if (workspaceId === undefined) continue;
        generation++;
        entries.delete(workspaceId);
      }
    },

    /** Forgets everything (the bus lost or regained its connection). */
    clear(): void {
      generation++;
      entries.clear();
    },

    get size(): number {
      return entries.size;
    },
  };
}

export type TenantEndpointCache = ReturnType<typeof createTenantEndpointCache>;
