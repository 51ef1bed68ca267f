import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

// Fixed one-minute windows per bucket: principals on authenticated routes, IPs on public routes,
// IPs on the demo routes. In-process by default; in Redis (shared by every instance) when REDIS_URL is
// set, falling back to in-process counting while Redis is not ready.

export type RateLimitBucket = 'principal' | 'ip' | 'demo';

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
  headers: Record<string, string>;
}

export interface RateLimiter {
  consume(bucket: RateLimitBucket, key: string): Promise<RateLimitDecision>;
}

export interface RateLimitLimits {
  principalPerMin: number;
  ipPerMin: number;
  demoPerMin: number;
}

const WINDOW_SECONDS = 60;

/** A bucket's limit and what its headers say of it, written once (a request adds only its counts). */
interface BucketHeaders {
  limit: number;
  limitText: string;
  policy: string;
}

const bucketHeaders = (limit: number): BucketHeaders => ({ limit, limitText: String(limit), policy: `${limit};w=${WINDOW_SECONDS}` });

function decision(bucket: BucketHeaders, res: RateLimiterRes, allowed: boolean): RateLimitDecision {
  const resetSeconds = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
  const remaining = Math.max(0, allowed ? res.remainingPoints : 0);
  const headers: Record<string, string> = {
    'RateLimit-Limit': bucket.limitText,
    'RateLimit-Remaining': String(remaining),
    'RateLimit-Reset': String(resetSeconds),
    'RateLimit-Policy': bucket.policy,
  };
  if (!allowed) headers['Retry-After'] = String(resetSeconds);
  return { allowed, limit: bucket.limit, remaining, resetSeconds, headers };
}

export interface RateLimiterOptions {
  redis?: Redis;
  keyPrefix?: string;
  /** Told once when Redis becomes unreachable (each instance then counts alone) and once when it is back. */
  onRedisState?: (state: 'lost' | 'restored', error?: Error) => void;
}

export function createRateLimiter(limits: RateLimitLimits, options: RateLimiterOptions = {}): RateLimiter {
  const points: Record<RateLimitBucket, number> = {
    principal: limits.principalPerMin,
    ip: limits.ipPerMin,
    demo: limits.demoPerMin,
  };
  const prefix = options.keyPrefix ?? 'rl';
  // A lazily connecting client would never become ready, since a not-ready client is never sent a command.
  if (options.redis?.status === 'wait') options.redis.connect().catch(() => {});
  if (options.redis && options.onRedisState) {
    const report = options.onRedisState;
    let lost = false;
    options.redis.on('error', (error: Error) => {
      if (lost) return;
      lost = true;
      report('lost', error);
    });
    options.redis.on('ready', () => {
      if (!lost) return;
      lost = false;
      report('restored');
    });
  }
  const limiters = Object.fromEntries(
    (Object.keys(points) as RateLimitBucket[]).map((bucket) => {
      const opts = { points: points[bucket], duration: WINDOW_SECONDS, keyPrefix: `${prefix}:${bucket}` };
      // While Redis is unreachable (or still connecting) each instance counts on its own rather
      // than failing or stalling every request: the insurance limiter takes over at once.
      const limiter = options.redis
        ? new RateLimiterRedis({ ...opts, storeClient: options.redis, rejectIfRedisNotReady: true, insuranceLimiter: new RateLimiterMemory(opts) })
        : new RateLimiterMemory(opts);
      return [bucket, limiter];
    }),
  ) as Record<RateLimitBucket, RateLimiterMemory | RateLimiterRedis>;

  const headersOf: Record<RateLimitBucket, BucketHeaders> = { principal: bucketHeaders(points.principal), ip: bucketHeaders(points.ip), demo: bucketHeaders(points.demo) };

  return {
    async consume(bucket, key) {
      try {
        const res = await limiters[bucket].consume(key);
        return decision(headersOf[bucket], res, true);
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) return decision(headersOf[bucket], rejection, false);
        throw rejection;
      }
    },
  };
}
