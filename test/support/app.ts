import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Redis } from 'ioredis';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import type { Clock } from '../../src/platform/clock.ts';
import type { Platform } from '../../src/platform/platform.ts';
import { randomToken } from '../../src/platform/secrets.ts';
import { closeAtEnd } from './cleanup.ts';
import { recordOperations } from './coverage.ts';
import { testDatabase } from './database.ts';

export interface TestApp {
  app: FastifyInstance;
  platform: Platform;
  dataDir: string;
  /** app.inject with an optional bearer token and workspace. */
  request(options: InjectOptions & { token?: string; workspaceId?: string }): Promise<LightMyRequestResponse>;
}

const DEFAULT_ENV: Record<string, string> = {
  LOG_LEVEL: 'silent',
  ALLOW_PRIVATE_URLS: 'true',
  RATE_LIMIT_USER_PER_MIN: '100000',
  RATE_LIMIT_IP_PER_MIN: '100000',
  RATE_LIMIT_DEMO_PER_MIN: '100000',
  PUBLIC_BASE_URL: 'http://localhost:3000',
};

/**
 * Builds the real app on this file's test database. `env` overrides configuration (as the
 * process environment would). The app is closed when test `t` ends, or with the file.
 */
export async function buildTestApp(
  options: { env?: Record<string, string>; clock?: Clock; redis?: Redis; t?: TestContext } = {},
): Promise<TestApp> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-data-'));
  const config = loadConfig({ ...DEFAULT_ENV, DATA_DIR: dataDir, ...options.env });
  const database = await testDatabase();
  const { app, platform } = await buildApp({
    config,
    database,
    clock: options.clock ?? { now: () => new Date() },
    jwtSecret: randomToken('', 32),
    redis: options.redis,
    instrument: recordOperations,
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
    dataDir,
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
