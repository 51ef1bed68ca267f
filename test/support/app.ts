import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Redis } from 'ioredis';
import pino, { type DestinationStream } from 'pino';
import { type AppModules, buildApp } from '../../src/app.ts';
import type { ProviderOverrides } from '../../src/providers/index.ts';
import type { Job } from '../../src/platform/jobs/job.ts';
import { loadConfig } from '../../src/config.ts';
import type { Clock } from '../../src/platform/clock.ts';
import type { DatabaseHandle } from '../../src/platform/db/database.ts';
import { createLogger } from '../../src/platform/logging.ts';
import type { Platform } from '../../src/platform/platform.ts';
import { randomToken } from '../../src/platform/secrets.ts';
import { closeAtEnd } from './cleanup.ts';
import { recordOperations } from './coverage.ts';
import { testDatabase } from './database.ts';
import { logFileName } from './log-scan.ts';

export interface TestApp {
  app: FastifyInstance;
  platform: Platform;
  /**
   * The app's modules (src/app.ts), never started: e.g. `modules.calls` (its dialer's runDueOnce
   * and start, the runner of this app's live calls), `modules.schedules.worker`, `modules.campaigns.dialer`.
   */
  modules: AppModules;
  /** Every module's background jobs, in start order (as src/server.ts starts them). */
  jobs: Job[];
  dataDir: string;
  /** The secret the app signs and verifies access tokens with (to forge tokens in tests). */
  jwtSecret: string;
  /** app.inject with an optional bearer token and workspace. */
  request(options: InjectOptions & { token?: string; workspaceId?: string }): Promise<LightMyRequestResponse>;
}

const DEFAULT_ENV: Record<string, string> = {
  ALLOW_PRIVATE_URLS: 'true',
  RATE_LIMIT_USER_PER_MIN: '100000',
  RATE_LIMIT_IP_PER_MIN: '100000',
  RATE_LIMIT_DEMO_PER_MIN: '100000',
  PUBLIC_BASE_URL: 'http://localhost:3000',
};

let suiteLog: ReturnType<typeof pino.destination> | undefined;

/** This process's log file in TEST_COVERAGE_DIR (buffered; flushed when the test file ends). */
function suiteLogDestination(): DestinationStream | undefined {
  const dir = process.env.TEST_COVERAGE_DIR;
  if (!dir) return undefined;
  if (!suiteLog) {
    const destination = pino.destination({ dest: path.join(dir, logFileName(process.pid)), sync: false, minLength: 8 * 1024 });
    suiteLog = destination;
    // Registered before any app's closer, so it runs after them all (closers run last opened first).
    closeAtEnd(() => new Promise<void>((resolve) => destination.flush(() => resolve())));
  }
  return suiteLog;
}

/**
 * Builds the real app on this file's test database. `env` overrides configuration (as the
 * process environment would). The app is closed when test `t` ends, or with the file.
 */
export async function buildTestApp(
  options: {
    env?: Record<string, string>;
    clock?: Clock;
    redis?: Redis;
    t?: TestContext;
    /** Where the app's log lines also go, beside the suite's log file (a test reading its own log). */
    logTo?: DestinationStream;
    /** Called on the bare app after the operation recorder, before any route is added. */
    instrument?: (app: FastifyInstance) => void;
    /** Adapters replacing the configured ones. */
    providers?: ProviderOverrides;
    /** Another handle on the file's database (a second instance); default the file's own. */
    database?: DatabaseHandle;
    /** The access-token key (instances of one deployment share it); default a new one. */
    jwtSecret?: string;
  } = {},
): Promise<TestApp> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-data-'));
  const config = loadConfig({ ...DEFAULT_ENV, DATA_DIR: dataDir, ...options.env });
  const database = options.database ?? (await testDatabase());
  const jwtSecret = options.jwtSecret ?? randomToken('', 32);
  // Every test app logs at debug into the suite's log file, scanned for secrets after the suite
  // (test/log-secrets.check.ts); without one (a bare `node --test`) it logs nothing but to `logTo`.
  const streams = [suiteLogDestination(), options.logTo].filter((stream): stream is DestinationStream => stream !== undefined);
  const destination = streams.length > 1 ? pino.multistream(streams.map((stream) => ({ stream, level: 'debug' as const }))) : streams[0];
  const { app, platform, modules, jobs } = await buildApp({
    config,
    database,
    clock: options.clock ?? { now: () => new Date() },
    jwtSecret,
    redis: options.redis,
    providers: options.providers,
    logger: createLogger({ level: destination ? 'debug' : 'silent', destination }),
    instrument: (bare) => {
      recordOperations(bare);
      options.instrument?.(bare);
    },
  });
  await app.ready();
  const close = async () => {
    await app.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  if (options.t) options.t.after(close);
  else closeAtEnd(close);
  return {
    app,
    platform,
    modules,
    jobs,
    dataDir,
    jwtSecret,
    request({ token, workspaceId, headers, ...rest }) {
      return app.inject({
        ...rest,
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(workspaceId ? { 'x-workspace-id': workspaceId } : {}),
          ...headers,
        },
      });
    },
  };
}
