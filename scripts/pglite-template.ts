// Makes the migrated PGlite data directory a new DATA_DIR starts from
// (src/platform/db/pglite-template.ts). `npm ci` runs it after installing (postinstall); run it
// again by hand after adding a migration, or let the server apply the new ones at each fresh start.
// It never fails the install: without a template a new DATA_DIR creates its database as before.
import fs from 'node:fs';
import { migrateToLatest, openDatabase } from '../src/platform/db/database.ts';
import { currentTemplateInfo, PGLITE_TEMPLATE_DIR, pgliteTemplateInfoFile, usablePgliteTemplate, writeTemplateInfo } from '../src/platform/db/pglite-template.ts';

const started = performance.now();
const info = currentTemplateInfo();
const existing = usablePgliteTemplate();
const made = existing ? (JSON.parse(fs.readFileSync(pgliteTemplateInfoFile(existing), 'utf8')) as { migrations: string[] }) : undefined;
if (made && made.migrations.length === info.migrations.length) {
  console.log(`PGlite template for new data directories: up to date (${PGLITE_TEMPLATE_DIR})`);
} else {
  const partial = `${PGLITE_TEMPLATE_DIR}.making-${process.pid}`;
  try {
    fs.rmSync(partial, { recursive: true, force: true });
    const database = await openDatabase({ pgliteDir: partial });
    await migrateToLatest(database);
    await database.close();
    // The description goes first and comes back last: a half-replaced template is never used.
    fs.rmSync(pgliteTemplateInfoFile(PGLITE_TEMPLATE_DIR), { force: true });
    fs.rmSync(PGLITE_TEMPLATE_DIR, { recursive: true, force: true });
    fs.renameSync(partial, PGLITE_TEMPLATE_DIR);
    writeTemplateInfo(PGLITE_TEMPLATE_DIR, info);
    console.log(`PGlite template for new data directories made in ${((performance.now() - started) / 1000).toFixed(1)} s (${PGLITE_TEMPLATE_DIR})`);
  } catch (error) {
    fs.rmSync(partial, { recursive: true, force: true });
    console.warn(`No PGlite template (${(error as Error).message}): a new DATA_DIR creates its database at its first start.`);
  }
}
