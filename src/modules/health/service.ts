import { API_VERSION } from '../../platform/http/openapi.ts';

// What GET /v1/health reports: the database's and Redis's answers to a ping, and the process's
// uptime. The pings are handed in by module.ts (the platform's database and Redis).

export interface HealthDeps {
  /** Which database: embedded PGlite or a real PostgreSQL. */
  databaseKind: 'pglite' | 'postgres';
  /** Resolves when the database answers; rejects otherwise. */
  pingDatabase(): Promise<unknown>;
  /** Answers Redis's reply to PING; absent without Redis. */
  pingRedis?: () => Promise<string>;
}

export function createHealthService(deps: HealthDeps) {
  return {
    /** The report, and whether every dependency answered (200) or not (503). */
    async check() {
      const database = await deps.pingDatabase().then(
        () => true,
        () => false,
      );
      const redis = deps.pingRedis ? { ok: await deps.pingRedis().then((r) => r === 'PONG', () => false) } : null;
      const ok = database && (redis?.ok ?? true);
      return {
        ok,
        report: {
          status: ok ? ('ok' as const) : ('degraded' as const),
          version: API_VERSION,
          database: { kind: deps.databaseKind, ok: database },
          redis,
          uptime_seconds: Math.round(process.uptime()),
        },
      };
    },
  };
}

export type HealthService = ReturnType<typeof createHealthService>;
