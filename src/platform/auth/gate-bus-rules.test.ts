import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it, type TestContext } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import pg from 'pg';
import pino from 'pino';
import { testDatabase, usingPostgres } from '../../../test/support/database.ts';
import { until } from '../../../test/support/processes.ts';
import { dropSchemaLater } from '../../../test/support/schemas.ts';
import { type DatabaseHandle, openDatabase } from '../db/database.ts';
import { joinGateBus } from './gate-bus.ts';
import type { GateEvent, InvalidatedCache } from './gate-cache.ts';

// The gate bus's protocol on its NOTIFY channel (gate-bus.ts), against a peer played by hand: a
// plain `pg` client that LISTENs on the same channel and sends the messages another instance
// would (hello, here, inv, ack, bye). PostgreSQL only: a PGlite handle has no bus to talk to.

const postgresOnly = { skip: !usingPostgres() && 'PostgreSQL only (TEST_DATABASE_URL)' } as const;
const KEY: GateEvent = { kind: 'key', id: 'key_bus_rules' };

/**
 * How long the bus waits for an acknowledgement, and a peer for a message: far longer than a
 * NOTIFY's round trip on a loaded machine, so that only a message that never comes reaches it.
 */
const PATIENT_MS = 30_000;
/** The silent-instance test's wait: it lasts this long. */
const SILENCE_MS = 3000;

type Message = { t: string; i: string; n?: string; e?: GateEvent[] };

/** A cache that records what the bus asks of it. */
function recordingCache() {
  const applied: GateEvent[][] = [];
  let cleared = 0;
  const cache: InvalidatedCache = {
    apply: (events) => void applied.push([...events]),
    clear: () => void cleared++,
  };
  return { cache, applied, cleared: () => cleared };
}

/** A logger that keeps its warnings. */
function recordingLogger() {
  const warnings: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line)) }) as unknown as FastifyBaseLogger;
  return { logger, warnings };
}

/** Another instance, played by hand on its own connection. */
async function peerOn(t: TestContext, channel?: string, id = 'feedbeeffeedbeef') {
  channel ??= `auth_gate_${(await testDatabase()).schema}`;
  const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await client.connect();
  t.after(() => client.end());
  const heard: Message[] = [];
  const waiting: Array<{ match: (m: Message) => boolean; resolve: (m: Message) => void }> = [];
  client.on('notification', (note) => {
    if (note.channel !== channel) return;
    let message: Message;
    try {
      message = JSON.parse(note.payload ?? '') as Message;
    } catch {
      return;
    }
    heard.push(message);
    for (const w of waiting.filter((w) => w.match(message))) {
      waiting.splice(waiting.indexOf(w), 1);
      w.resolve(message);
    }
  });
  await client.query(`LISTEN ${channel}`);
  return {
    id,
    heard,
    send: async (message: Message | string) => {
      await client.query('select pg_notify($1, $2)', [channel, typeof message === 'string' ? message : JSON.stringify(message)]);
    },
    /** The next message (from now or already heard) that matches. */
    next(match: (m: Message) => boolean, what: string): Promise<Message> {
      const seen = heard.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`never heard: ${what}`)), PATIENT_MS);
        waiting.push({
          match,
          resolve: (m) => {
            clearTimeout(timer);
            resolve(m);
          },
        });
      });
    },
  };
}

/**
 * Another instance's handle on this file's schema (a pool of its own, so a bus of its own),
 * closed by whoever opened it: every test holds its connections only while it runs.
 */
async function instanceHandle(): Promise<DatabaseHandle> {
  return openDatabase({ databaseUrl: process.env.TEST_DATABASE_URL as string, schema: (await testDatabase()).schema, poolSize: 2 });
}

/**
 * A bus joined on a handle of its own (`database`, or a new instance handle), left and the handle
 * closed after the test; nothing awaited.
 */
async function joinedOn(t: TestContext, options: { database?: DatabaseHandle; ackTimeoutMs?: number } = {}) {
  const database = options.database ?? (await instanceHandle());
  const { cache, applied, cleared } = recordingCache();
  const { logger, warnings } = recordingLogger();
  const joined = joinGateBus(database, cache, logger, { ackTimeoutMs: options.ackTimeoutMs ?? PATIENT_MS });
  t.after(async () => {
    await joined.leave();
    await database.close();
  });
  return { ...joined, pool: database.pool as pg.Pool, schema: database.schema, applied, cleared, warnings };
}

/** A bus of its own (each handle, with its own pool and LISTEN connection, has one), listening and trusted. */
async function busOn(t: TestContext, ackTimeoutMs = PATIENT_MS) {
  const joined = await joinedOn(t, { ackTimeoutMs });
  await joined.started;
  await joined.bus.ready(PATIENT_MS);
  return joined;
}

let probes = 0;

/**
 * Whether `promise` has settled once the bus has heard everything the peer sent before: the peer
 * sends an empty invalidation and waits for its acknowledgement (each connection hears the
 * channel in commit order, so the bus has then heard what came before it).
 */
async function settledAfterProbe(peer: Awaited<ReturnType<typeof peerOn>>, promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(() => (settled = true));
  const nonce = `probe-${++probes}`;
  await peer.send({ t: 'inv', i: peer.id, n: nonce, e: [] });
  await peer.next((m) => m.t === 'ack' && m.n === nonce, `the ack of ${nonce}`);
  await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

/** What the caches were asked to drop, without the probes' empty invalidations. */
const dropped = (applied: GateEvent[][]) => applied.filter((events) => events.length > 0);

describe('the gate bus on its NOTIFY channel', postgresOnly, () => {
  it('says hello once listening, trusts itself once it hears its own hello, and starts with its caches cleared', async (t) => {
    const peer = await peerOn(t);
    const bus = await busOn(t);
    const hello = await peer.next((m) => m.t === 'hello', 'hello');
    assert.match(hello.i, /^[0-9a-f]{16}$/);
    assert.equal(bus.bus.trusted, true);
    assert.ok(bus.cleared() >= 1, 'the caches are cleared when the connection listens');
  });

  it("answers another instance's hello with here, naming itself, and not its own", async (t) => {
    const peer = await peerOn(t);
    const bus = await busOn(t);
    const me = (await peer.next((m) => m.t === 'hello', 'hello')).i;
    await peer.send({ t: 'hello', i: peer.id });
    const here = await peer.next((m) => m.t === 'here', 'here');
    assert.equal(here.i, me);
    assert.equal(peer.heard.filter((m) => m.t === 'here').length, 1, 'its own hello is answered by nobody');
    assert.equal(bus.bus.trusted, true);
  });

  it("applies another instance's invalidation to every cache it carries and acknowledges it by its nonce", async (t) => {
    const peer = await peerOn(t);
    const bus = await busOn(t);
    const me = (await peer.next((m) => m.t === 'hello', 'hello')).i;
    await peer.send({ t: 'inv', i: peer.id, n: 'nonce-1', e: [KEY] });
    const ack = await peer.next((m) => m.t === 'ack', 'ack');
    assert.deepEqual(ack, { t: 'ack', i: me, n: 'nonce-1' });
    assert.deepEqual(bus.applied, [[KEY]]);
  });

  it('ignores a payload that is not JSON and goes on hearing the next', async (t) => {
    const peer = await peerOn(t);
    const bus = await busOn(t);
    await peer.send('not json {');
    await peer.send({ t: 'inv', i: peer.id, n: 'nonce-2', e: [KEY] });
    await peer.next((m) => m.t === 'ack', 'ack');
    assert.deepEqual(bus.applied, [[KEY]]);
  });

  it('publishes to itself at once, then waits for every instance it knows to acknowledge', async (t) => {
    const peer = await peerOn(t);
    const bus = await busOn(t);
    await peer.send({ t: 'here', i: peer.id });
    const publishing = bus.bus.publish([KEY]);
    assert.deepEqual(bus.applied, [[KEY]], 'its own caches drop the entries before anything is sent');
    const inv = await peer.next((m) => m.t === 'inv', 'inv');
    assert.deepEqual(inv.e, [KEY]);
    assert.equal(await settledAfterProbe(peer, publishing), false, 'not before the peer has acknowledged');
    await peer.send({ t: 'ack', i: peer.id, n: 'another nonce' });
    assert.equal(await settledAfterProbe(peer, publishing), false, "another nonce's ack settles nothing");
    await peer.send({ t: 'ack', i: peer.id, n: inv.n });
    await publishing;
    assert.deepEqual(bus.warnings, [], 'confirmed in time');
  });

  it("an instance's bye settles the publications waiting for it", async (t) => {
    const peer = await peerOn(t);
    const bus = await busOn(t);
    await peer.send({ t: 'here', i: peer.id });
    const publishing = bus.bus.publish([KEY]);
    await peer.next((m) => m.t === 'inv', 'inv');
    assert.equal(await settledAfterProbe(peer, publishing), false);
    await peer.send({ t: 'bye', i: peer.id });
    await publishing;
    assert.deepEqual(bus.warnings, []);
    // Gone: the next publication waits for nobody.
    await bus.bus.publish([KEY]);
    assert.deepEqual(bus.warnings, []);
  });

  it('an instance that does not acknowledge in time is warned of and forgotten: the next publication waits for nobody', async (t) => {
    const peer = await peerOn(t);
    const bus = await busOn(t, SILENCE_MS);
    await peer.send({ t: 'here', i: peer.id });
    await peer.send({ t: 'here', i: 'a-prompt-one' });
    const publishing = bus.bus.publish([KEY]);
    const inv = await peer.next((m) => m.t === 'inv' && m.i !== peer.id, 'inv');
    await peer.send({ t: 'ack', i: 'a-prompt-one', n: inv.n });
    // An instance met after the invalidation went out was not asked to confirm it.
    await peer.send({ t: 'here', i: 'a-newcomer' });
    await publishing;
    assert.equal(bus.warnings.length, 1);
    assert.equal(bus.warnings[0].silent, 1);
    await peer.send({ t: 'bye', i: 'a-newcomer' });
    await peer.send({ t: 'bye', i: 'a-prompt-one' });
    assert.match(String(bus.warnings[0].msg), /did not confirm an invalidation in time/);
    await bus.bus.publish([KEY]);
    assert.equal(bus.warnings.length, 1, 'the silent instance was forgotten');
  });

  for (const introduction of ['inv', 'ack'] as const) {
    it(`learns of an instance from its ${introduction}, as from a here: a publication waits for it`, async (t) => {
      const peer = await peerOn(t);
      const bus = await busOn(t);
      await peer.send(introduction === 'inv' ? { t: 'inv', i: peer.id, n: 'x', e: [] } : { t: 'ack', i: peer.id, n: 'x' });
      const publishing = bus.bus.publish([KEY]);
      const inv = await peer.next((m) => m.t === 'inv' && m.i !== peer.id, 'inv');
      assert.equal(await settledAfterProbe(peer, publishing), false);
      await peer.send({ t: 'ack', i: peer.id, n: inv.n });
      await publishing;
      assert.deepEqual(bus.warnings, []);
    });
  }

  it('knows not itself from its own here and ack: a publication with nobody else waits for nobody', async (t) => {
    const peer = await peerOn(t);
    const bus = await busOn(t);
    const me = (await peer.next((m) => m.t === 'hello', 'hello')).i;
    await peer.send({ t: 'here', i: me });
    await peer.send({ t: 'ack', i: me, n: 'x' });
    await bus.bus.publish([KEY]);
    assert.deepEqual(bus.warnings, []);
  });

  it('publishes nothing for no events', async (t) => {
    const peer = await peerOn(t);
    const bus = await busOn(t);
    await bus.bus.publish([]);
    assert.equal(await settledAfterProbe(peer, Promise.resolve()), true);
    assert.deepEqual(dropped(bus.applied), []);
    assert.deepEqual(peer.heard.filter((m) => m.t === 'inv' && m.i !== peer.id), []);
  });

  it('says bye when its last cache leaves, and then hears nothing more', async (t) => {
    const peer = await peerOn(t);
    const bus = await busOn(t);
    const me = (await peer.next((m) => m.t === 'hello', 'hello')).i;
    await bus.leave();
    const bye = await peer.next((m) => m.t === 'bye', 'bye');
    assert.equal(bye.i, me);
    assert.equal(bus.bus.trusted, false);
  });

  it('names its channel after the schema: lower case, any other character as _, at most 63 characters; auth_gate without one', async (t) => {
    const url = process.env.TEST_DATABASE_URL as string;
    const hex = randomBytes(4).toString('hex');
    const long = `g${hex}`.padEnd(60, 'x');
    const cases: Array<[string | undefined, string]> = [
      [`Gate-Bus.${hex}`, `auth_gate_gate_bus_${hex}`],
      [long, `auth_gate_${long}`.slice(0, 63)],
      [undefined, 'auth_gate'],
    ];
    for (const [schema, channel] of cases) {
      const database = await openDatabase({ databaseUrl: url, schema, poolSize: 2 });
      try {
        const peer = await peerOn(t, channel);
        const joined = joinGateBus(database, recordingCache().cache, recordingLogger().logger);
        try {
          await peer.next((m) => m.t === 'hello', `the hello on ${channel}`);
          await joined.bus.ready(PATIENT_MS);
          assert.equal(joined.bus.trusted, true, channel);
        } finally {
          await joined.leave();
        }
      } finally {
        await database.close();
        if (schema) await dropSchemaLater(url, schema);
      }
    }
  });

  it('trusts itself only once its own hello is back, not as soon as it listens', async (t) => {
    const database = await instanceHandle();
    const held = await (database.pool as pg.Pool).connect();
    const joined = await joinedOn(t, { database });
    const { pool } = joined;
    // The LISTEN connection takes the pool's other connection: the hello waits for one.
    await joined.started;
    await until('the hello waiting for a connection', async () => (pool.waitingCount === 1 ? true : undefined), PATIENT_MS);
    const trustedMeanwhile = joined.bus.trusted;
    held.release();
    assert.equal(trustedMeanwhile, false, 'listening, but its hello is not back');
    await joined.bus.ready(PATIENT_MS);
    assert.equal(joined.bus.trusted, true);
  });

  it('after losing its connection, trusts itself again only once its new hello is back', async (t) => {
    const joined = await busOn(t);
    const { pool, schema } = joined;
    // Both connections held: the LISTEN again waits for one, then its hello for the other.
    const first = await pool.connect();
    const [{ pid }] = (await first.query<{ pid: number }>('select pid from pg_stat_activity where query = $1', [`LISTEN auth_gate_${schema}`])).rows;
    await first.query('select pg_terminate_backend($1)', [pid]);
    // Asked for at once: the pool hands over the killed connection's place when it is dropped,
    // before the listener asks again (a second after the loss), so the listener waits for `first`.
    const second = await pool.connect();
    const trustedAfterLoss = joined.bus.trusted;
    first.release();
    await until('the new hello waiting for a connection', async () => (pool.waitingCount === 1 ? true : undefined), PATIENT_MS);
    const trustedMeanwhile = joined.bus.trusted;
    second.release();
    assert.equal(trustedAfterLoss, false, 'the loss noticed');
    assert.equal(trustedMeanwhile, false, 'listening again, but its new hello is not back');
    await joined.bus.ready(PATIENT_MS);
    assert.equal(joined.bus.trusted, true);
  });

  it('an invalidation too long for NOTIFY is dropped here, warned of, and waits for nobody', async (t) => {
    const peer = await peerOn(t);
    const bus = await busOn(t);
    await peer.send({ t: 'here', i: peer.id });
    const huge: GateEvent = { kind: 'key', id: 'k'.repeat(9000) };
    await bus.bus.publish([huge]);
    assert.deepEqual(dropped(bus.applied), [[huge]]);
    assert.equal(bus.warnings.length, 1);
    assert.match(String(bus.warnings[0].msg), /NOTIFY of an invalidation failed/);
    assert.ok(bus.warnings[0].err, 'the error is logged');
  });

  it('publishing before it listens tells the others without waiting for them', async (t) => {
    const peer = await peerOn(t);
    const { bus, applied, warnings, started } = await joinedOn(t);
    const huge: GateEvent = { kind: 'key', id: 'k'.repeat(9000) };
    // Both before its connection listens (it is being set up).
    await Promise.all([bus.publish([KEY]), bus.publish([huge])]);
    assert.deepEqual(applied, [[KEY], [huge]]);
    const inv = await peer.next((m) => m.t === 'inv', 'inv');
    assert.deepEqual({ n: inv.n, e: inv.e }, { n: '-', e: [KEY] });
    assert.equal(warnings.length, 1, 'only the NOTIFY that failed');
    assert.match(String(warnings[0].msg), /^auth cache: NOTIFY failed$/);
    assert.ok(warnings[0].err);
    await started;
  });
});
