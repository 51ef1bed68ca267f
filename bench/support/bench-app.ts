import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type AppInputs, buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { systemClock } from '../../src/platform/clock.ts';
import { migrateToLatest, openDatabase } from '../../src/platform/db/database.ts';
import { createLogger } from '../../src/platform/logging.ts';

// The product as the benches run it: the whole app (buildApp) on a fresh PGlite in a temp
// DATA_DIR, configured as `npm start` is but for the limits a load generator would trip (rate
// limits, signup credit) and silent logging. Each bench adds its own settings on top.

/** A temp DATA_DIR named after the bench. */
export const benchDataDir = (name: string) => fs.mkdtempSync(path.join(os.tmpdir(), `vap-bench-${name}-`));

/** The benches' configuration: `extra` on top of the common settings. */
export function benchConfig(dataDir: string, extra: Record<string, string> = {}) {
  return loadConfig({
    DATA_DIR: dataDir,
    PUBLIC_BASE_URL: 'http://127.0.0.1',
    RATE_LIMIT_USER_PER_MIN: '1000000',
    RATE_LIMIT_IP_PER_MIN: '1000000',
    SIGNUP_CREDIT_USD: '100000',
    LOG_LEVEL: 'silent',
    ...extra,
  });
}

/** buildApp on a migrated PGlite in `dataDir`, silent, with `benchConfig(dataDir, extra)`. */
export async function buildBenchApp(dataDir: string, extra: Record<string, string> = {}, inputs: Partial<AppInputs> = {}) {
  const database = await openDatabase({ pgliteDir: path.join(dataDir, 'pglite') });
  await migrateToLatest(database);
  const config = benchConfig(dataDir, extra);
  const built = await buildApp({ config, database, clock: systemClock, jwtSecret: 'x'.repeat(40), logger: createLogger({ level: 'silent' }), ...inputs });
  return { ...built, config, database };
}
