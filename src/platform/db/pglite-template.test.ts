import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { migrateToLatest, openDatabase } from './database.ts';
import { currentTemplateInfo, pgliteTemplateInfoFile, seedPgliteDir, usablePgliteTemplate, writeTemplateInfo } from './pglite-template.ts';

// A new DATA_DIR starts from the migrated template made at install time (scripts/pglite-template.ts)
// when it suits this code, and is created as before otherwise; an existing database is never touched.

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-template-'));
const template = path.join(work, 'template');

describe('the PGlite template of new data directories', () => {
  before(async () => {
    // The suite's migrated template when there is one (scripts/run-tests.mjs), else made here.
    const prepared = process.env.TEST_PGLITE_TEMPLATE;
    if (prepared && fs.existsSync(prepared)) fs.cpSync(prepared, template, { recursive: true });
    else {
      const made = await openDatabase({ pgliteDir: template });
      await migrateToLatest(made);
      await made.close();
    }
    writeTemplateInfo(template, currentTemplateInfo());
  });
  after(() => fs.rmSync(work, { recursive: true, force: true }));

  it('is used only when made by this PGlite version with a prefix of these migrations', () => {
    assert.equal(usablePgliteTemplate(template), template);
    const info = currentTemplateInfo();
    const variants: Array<[string, unknown]> = [
      ['another PGlite version', { ...info, pglite: '0.0.1' }],
      ['a migration this code lacks', { ...info, migrations: [...info.migrations, '9999_future'] }],
      ['a different first migration', { ...info, migrations: ['0001_other', ...info.migrations.slice(1)] }],
      ['no migration list', { pglite: info.pglite }],
    ];
    for (const [name, variant] of variants) {
      fs.writeFileSync(pgliteTemplateInfoFile(template), JSON.stringify(variant));
      assert.equal(usablePgliteTemplate(template), undefined, name);
    }
    // An older template (fewer migrations) still serves: the missing ones run at start-up.
    writeTemplateInfo(template, { ...info, migrations: info.migrations.slice(0, 3) });
    assert.equal(usablePgliteTemplate(template), template);
    fs.rmSync(pgliteTemplateInfoFile(template));
    assert.equal(usablePgliteTemplate(template), undefined, 'without its description');
    assert.equal(usablePgliteTemplate(path.join(work, 'missing')), undefined);
    writeTemplateInfo(template, info);
  });

  it('gives a new data directory a migrated database; an existing one is left as it is', async () => {
    const dir = path.join(work, 'data-1', 'pglite');
    const database = await openDatabase({ pgliteDir: dir, pgliteTemplate: template });
    try {
      assert.equal(database.fromTemplate, true);
      const applied = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(database.db);
      assert.deepEqual(
        applied.rows.map((r) => r.name),
        currentTemplateInfo().migrations,
      );
      await migrateToLatest(database);
      await sql`insert into workspaces (id, name, created_at, updated_at) values ('ws_template_test', 'Kept', now(), now())`.execute(database.db);
    } finally {
      await database.close();
    }
    assert.deepEqual(fs.readdirSync(path.dirname(dir)), ['pglite'], 'no partial copy left beside it');
    const again = await openDatabase({ pgliteDir: dir, pgliteTemplate: template });
    try {
      assert.equal(again.fromTemplate, false);
      const kept = await sql<{ name: string }>`select name from workspaces where id = 'ws_template_test'`.execute(again.db);
      assert.deepEqual(kept.rows, [{ name: 'Kept' }]);
    } finally {
      await again.close();
    }
  });

  it('fills an empty directory, and never a directory that holds files', () => {
    const empty = path.join(work, 'data-2', 'pglite');
    fs.mkdirSync(empty, { recursive: true });
    assert.equal(seedPgliteDir(empty, template), true);
    assert.ok(fs.existsSync(path.join(empty, 'PG_VERSION')));
    const occupied = path.join(work, 'data-3', 'pglite');
    fs.mkdirSync(occupied, { recursive: true });
    fs.writeFileSync(path.join(occupied, 'something'), 'x');
    assert.equal(seedPgliteDir(occupied, template), false);
    assert.deepEqual(fs.readdirSync(occupied), ['something']);
  });
});
