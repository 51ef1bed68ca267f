import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { sql } from 'kysely';
import { createChannelListener, type ChannelListener } from '../db/channel-listener.ts';
import type { DatabaseHandle } from '../db/database.ts';
import type { GateEvent, InvalidatedCache } from './gate-cache.ts';

// Carries the gate's invalidations to every cache on the same database (gate-cache.ts, and the
// outbox's tenant webhook endpoint cache, which rides along). One bus per database handle, shared
// by the apps built on it: publish() drops the entries in each of them synchronously; on
// PostgreSQL it also broadcasts on a NOTIFY channel, which one LISTEN connection per handle
// hears, and waits until every other instance has dropped them too.
//
// The protocol on the channel (JSON payloads, `i` the sender's instance id):
//   hello  — sent once listening; every instance answers `here` (so both know each other)
//   inv    — events to drop, with a nonce `n`; every other instance applies them, then sends `ack`
//   ack    — instance `i` has dropped inv `n`
//   bye    — the instance stops listening
// PostgreSQL delivers notifications to each listener in commit order. So when a publisher hears
// its own inv back it has heard every hello committed before it: the instances it knows then
// are exactly those that will hear the inv, and it waits for their acks (bounded: an instance
// that died is dropped after ACK_TIMEOUT_MS). A cache serves verdicts only once its instance has
// heard its own hello back (it has then heard every inv sent before anyone could know of it),
// and never while its LISTEN connection is down (it starts empty again afterwards).

const ACK_TIMEOUT_MS = 2000;

type Message =
  | { t: 'hello' | 'here' | 'bye'; i: string }
  | { t: 'inv'; i: string; n: string; e: GateEvent[] }
  | { t: 'ack'; i: string; n: string };

interface Publication {
  waiting: Set<string> | null;
  acked: Set<string>;
  done: () => void;
}

function channelFor(database: DatabaseHandle): string {
  const suffix = (database.schema ?? '').toLowerCase().replace(/[^a-z0-9_]/g, '_');
  return `auth_gate${suffix ? `_${suffix}` : ''}`.slice(0, 63);
}

function createGateBus(database: DatabaseHandle, logger: FastifyBaseLogger, ackTimeoutMs: number) {
  const caches = new Set<InvalidatedCache>();
  const instance = randomBytes(8).toString('hex');
  const peers = new Set<string>();
  const publications = new Map<string, Publication>();
  let trusted = database.kind !== 'postgres';
  let listener: ChannelListener | null = null;
  let trustWaiters: Array<() => void> = [];

  function trust(): void {
    trusted = true;
    for (const resolve of trustWaiters) resolve();
    trustWaiters = [];
  }

  const clearAll = () => {
    for (const cache of caches) cache.clear();
  };

  async function send(message: Message): Promise<void> {
    await sql`select pg_notify(${listener?.channel ?? ''}, ${JSON.stringify(message)})`.execute(database.db);
  }
  const sendQuietly = (message: Message) => void send(message).catch((err) => logger.warn({ err }, 'auth cache: NOTIFY failed'));

  function settle(nonce: string): void {
    const publication = publications.get(nonce);
    if (publication?.waiting && [...publication.waiting].every((peer) => publication.acked.has(peer))) publication.done();
  }

  function heard(payload: string | undefined): void {
    let message: Message;
    try {
      message = JSON.parse(payload ?? '') as Message;
    } catch {
      return;
    }
    const own = message.i === instance;
    switch (message.t) {
      case 'hello':
        if (own) trust();
        else {
          peers.add(message.i);
          sendQuietly({ t: 'here', i: instance });
        }
        break;
      case 'here':
        if (!own) peers.add(message.i);
        break;
      case 'bye':
        peers.delete(message.i);
        for (const [nonce, publication] of publications) {
          publication.acked.add(message.i);
          settle(nonce);
        }
        break;
      case 'inv': {
        if (own) {
          const publication = publications.get(message.n);
          if (publication) publication.waiting = new Set(peers);
          settle(message.n);
          break;
        }
        peers.add(message.i);
        for (const cache of caches) cache.apply(message.e);
        sendQuietly({ t: 'ack', i: instance, n: message.n });
        break;
      }
      case 'ack':
        if (own) break;
        peers.add(message.i);
        publications.get(message.n)?.acked.add(message.i);
        settle(message.n);
        break;
    }
  }

  async function start(): Promise<void> {
    const pool = database.pool;
    if (database.kind !== 'postgres' || !pool) return;
    listener = createChannelListener({
      pool,
      channel: channelFor(database),
      logger,
      name: 'auth cache',
      fallback: 'credentials are read from the database meanwhile',
      onNotification: heard,
      onListening: () => {
        clearAll();
        sendQuietly({ t: 'hello', i: instance });
      },
      onLost: () => {
        trusted = false;
        peers.clear();
        clearAll();
      },
    });
    await listener.start();
  }

  async function broadcast(events: GateEvent[]): Promise<void> {
    const nonce = randomBytes(8).toString('hex');
    let timer: NodeJS.Timeout | undefined;
    const finished = new Promise<boolean>((resolve) => {
      publications.set(nonce, { waiting: null, acked: new Set(), done: () => resolve(true) });
      timer = setTimeout(() => resolve(false), ackTimeoutMs);
    });
    try {
      try {
        await send({ t: 'inv', i: instance, n: nonce, e: events });
      } catch (err) {
        // The change has committed and this instance's caches dropped the entries: the caller's
        // request succeeded. Other instances keep theirs until AUTH_CACHE_TTL_SECONDS.
        logger.warn({ err }, 'auth cache: NOTIFY of an invalidation failed; other instances drop their entries when they expire');
        return;
      }
      if (!(await finished)) {
        const publication = publications.get(nonce);
        const silent = [...(publication?.waiting ?? peers)].filter((peer) => !publication?.acked.has(peer));
        for (const peer of silent) peers.delete(peer);
        logger.warn({ silent: silent.length }, 'auth cache: some instances did not confirm an invalidation in time; their cache entries expire with AUTH_CACHE_TTL_SECONDS');
      }
    } finally {
      clearTimeout(timer);
      publications.delete(nonce);
    }
  }

  return {
    get trusted(): boolean {
      return trusted && (listener === null || listener.listening);
    },
    caches,
    start,
    /** Resolves once the caches may serve verdicts, or after `timeoutMs` (then they keep reading the database until then). */
    async ready(timeoutMs: number): Promise<void> {
      if (this.trusted) return;
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        trustWaiters.push(resolve);
        timer = setTimeout(resolve, timeoutMs);
        timer.unref();
      });
      clearTimeout(timer);
    },
    /** Drops the entries in every cache on this handle, then (PostgreSQL) on every other instance. */
    async publish(events: GateEvent[]): Promise<void> {
      if (events.length === 0) return;
      for (const cache of caches) cache.apply(events);
      if (!listener) return;
      if (!listener.listening) {
        // Not listening: no acknowledgement could be heard; the others are told all the same.
        await send({ t: 'inv', i: instance, n: '-', e: events }).catch((err) => logger.warn({ err }, 'auth cache: NOTIFY failed'));
        return;
      }
      await broadcast(events);
    },
    async stop(): Promise<void> {
      if (!listener) return;
      if (listener.listening) await send({ t: 'bye', i: instance }).catch(() => undefined);
      await listener.stop();
      trusted = false;
    },
  };
}

type GateBus = ReturnType<typeof createGateBus>;

const buses = new WeakMap<DatabaseHandle, { bus: GateBus; started: Promise<void>; users: number }>();

/**
 * Joins `cache` to the bus of its database handle (started with its first cache). Returns the
 * bus and a leave function (the bus stops, giving its connection back, with its last cache).
 * `ackTimeoutMs` (how long a publication waits for the other instances) is the first joiner's.
 */
export function joinGateBus(database: DatabaseHandle, cache: InvalidatedCache, logger: FastifyBaseLogger, options: { ackTimeoutMs?: number } = {}) {
  let shared = buses.get(database);
  if (!shared) {
    const bus = createGateBus(database, logger, options.ackTimeoutMs ?? ACK_TIMEOUT_MS);
    shared = { bus, started: bus.start(), users: 0 };
    buses.set(database, shared);
  }
  const entry = shared;
  entry.users++;
  entry.bus.caches.add(cache);
  let left = false;
  return {
    bus: entry.bus,
    /** Resolves once the first LISTEN attempt is over (PostgreSQL). */
    started: entry.started,
    async leave(): Promise<void> {
      if (left) return;
      left = true;
      entry.bus.caches.delete(cache);
      if (--entry.users > 0) return;
      buses.delete(database);
      await entry.started;
      await entry.bus.stop();
    },
  };
}
