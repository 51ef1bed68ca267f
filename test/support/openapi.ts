import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/platform/db/database.ts';

/** The OpenAPI document as the app generates it, in the committed file's canonical form. */
export async function renderOpenApi(): Promise<string> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-openapi-'));
  // Routes need no database to be described: an in-memory PGlite stands in.
  const database = await openDatabase({});
  const config = loadConfig({ LOG_LEVEL: 'silent', DATA_DIR: dataDir, PUBLIC_BASE_URL: 'http://localhost:3000' });
  const { app } = await buildApp({ config, database, clock: { now: () => new Date() }, jwtSecret: 'x'.repeat(32) });
  await app.ready();
  const text = `${JSON.stringify(app.swagger(), null, 2)}\n`;
  await app.close();
  await database.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
  return text;
}
