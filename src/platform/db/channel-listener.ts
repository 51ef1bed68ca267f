import type { FastifyBaseLogger } from 'fastify';
import type pg from 'pg';

// LISTEN on one PostgreSQL NOTIFY channel through a dedicated pool connection, re-established
// when it drops (PostgreSQL restarted, the connection was killed). Used by the job runner (wake-ups)
// and the request gate's cache (invalidations from other instances). While the connection is
// down nothing is heard: `onListening` fires on every (re)connection so the owner can catch up
// (a job claims at once, a cache starts empty), `onLost` when it drops.

export const CHANNEL_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

const RELISTEN_AFTER_LOSS_MS = 1000;
const RELISTEN_AFTER_FAILURE_MS = 5000;

export interface ChannelListenerOptions {
  pool: pg.Pool;
  /** A plain lower-case identifier (checked). */
  channel: string;
  logger: FastifyBaseLogger;
  /** Names the owner in log lines ("webhooks: LISTEN connection lost; …"). */
  name: string;
  /** What the owner does meanwhile, for the log lines ("polling continues"). */
  fallback: string;
  onNotification(payload: string | undefined): void;
  /** The channel is listened to (first time and after every reconnection). */
  onListening?(): void;
  /** The listening connection dropped (a reconnection follows). */
  onLost?(): void;
  /** Extra log fields. */
  logFields?: Record<string, unknown>;
}

export function createChannelListener(options: ChannelListenerOptions) {
  const { pool, channel, logger, name, fallback } = options;
  if (!CHANNEL_NAME.test(channel)) throw new Error(`${name}: invalid channel name ${channel}`);
  const fields = options.logFields ?? {};
  let running = false;
  let client: pg.PoolClient | null = null;
  let retry: NodeJS.Timeout | null = null;

  async function release(own: pg.PoolClient): Promise<void> {
    own.removeAllListeners('notification');
    await own.query(`UNLISTEN ${channel}`).catch(() => undefined);
    own.removeAllListeners('error');
    own.release();
  }

  function listenAgainIn(ms: number): void {
    if (!running) return;
    retry = setTimeout(() => {
      retry = null;
      void listen();
    }, ms);
    retry.unref();
  }

  async function listen(): Promise<void> {
    if (!running) return;
    let connecting: pg.PoolClient | null = null;
    try {
      connecting = await pool.connect();
      const own = connecting;
      own.on('notification', (message) => {
        if (message.channel === channel) options.onNotification(message.payload);
      });
      own.on('error', (err) => {
        if (client !== own) return;
        client = null;
        own.release(err);
        logger.warn({ err, ...fields }, `${name}: LISTEN connection lost; ${fallback}, reconnecting`);
        options.onLost?.();
        listenAgainIn(RELISTEN_AFTER_LOSS_MS);
      });
      await own.query(`LISTEN ${channel}`);
      if (!running) {
        // stop() came while this connection was being set up.
        await release(own);
        return;
      }
      client = own;
      options.onListening?.();
    } catch (err) {
      logger.warn({ err, ...fields }, `${name}: LISTEN failed; ${fallback}`);
      connecting?.release(err as Error);
      listenAgainIn(RELISTEN_AFTER_FAILURE_MS);
    }
  }

  return {
    channel,
    /** Listening now (false before start, while reconnecting and after stop). */
    get listening(): boolean {
      return client !== null;
    },
    /** Starts listening; resolves once the first attempt has succeeded or failed (retries follow). */
    async start(): Promise<void> {
      if (running) return;
      running = true;
      await listen();
    },
    /** Stops listening and gives the connection back to the pool. */
    async stop(): Promise<void> {
      running = false;
      if (retry) clearTimeout(retry);
      retry = null;
      const own = client;
      client = null;
      if (own) await release(own);
    },
  };
}

export type ChannelListener = ReturnType<typeof createChannelListener>;
