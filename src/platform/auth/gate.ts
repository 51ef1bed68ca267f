import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.ts';
import type { DatabaseHandle } from '../db/database.ts';
import { joinGateBus } from './gate-bus.ts';
import { createGateCache, type GateEvent, type InvalidatedCache } from './gate-cache.ts';

// The gate's cache as the platform holds it: this app's cache joined to its database's bus.

const READY_TIMEOUT_MS = 3000;

export function createGate(deps: { database: DatabaseHandle; clock: Clock; logger: FastifyBaseLogger; ttlSeconds: number }) {
  let trusted = () => false;
  const cache = createGateCache({ ttlSeconds: deps.ttlSeconds, clock: deps.clock, trusted: () => trusted() });
  const joined = joinGateBus(deps.database, cache, deps.logger);
  const riders: Array<ReturnType<typeof joinGateBus>> = [];
  trusted = () => joined.bus.trusted;
  return {
    cache,
    /**
     * Call after the change has committed: drops the verdicts the events name in every cache of
     * every instance, and resolves once the other instances have confirmed it (PostgreSQL).
     */
    publish: (events: GateEvent[]) => joined.bus.publish(events),
    /**
     * Puts another cache on the same bus (the tenant webhook endpoints): it is cleared by the same
     * publications, and must serve only while `serving`. It leaves the bus with the gate.
     */
    carry<T extends InvalidatedCache>(other: T): T {
      riders.push(joinGateBus(deps.database, other, deps.logger));
      return other;
    },
    /** Listening (PostgreSQL), so the cache may serve verdicts; bounded. */
    async ready(): Promise<void> {
      await joined.started;
      await joined.bus.ready(READY_TIMEOUT_MS);
    },
    /** The cache may serve verdicts now (false while its LISTEN connection is down). */
    get serving(): boolean {
      return joined.bus.trusted;
    },
    async close(): Promise<void> {
      for (const rider of riders) await rider.leave();
      await joined.leave();
    },
  };
}

export type Gate = ReturnType<typeof createGate>;
/** What a service needs of the gate: telling it what changed. */
export type GatePublisher = Pick<Gate, 'publish'>;
