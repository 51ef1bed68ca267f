import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { migrations } from './migrations/index.ts';

// A migrated, empty PGlite data directory, made once per installation (`npm ci` runs
// scripts/pglite-template.ts after installing) and copied into a new DATA_DIR instead of creating
// the database there. Creating a PGlite database (initdb, in WebAssembly) and migrating it were
// most of a first start on a fresh DATA_DIR; copying the directory takes a fraction of that, and
// what the copy holds is exactly what the first start would have made before its first request
// (the migrations insert no rows; the demo workspace and the JWT secret are made per DATA_DIR
// afterwards, as before). Used only when it was made by this PGlite version with migrations that
// are a prefix of this code's (the ones it lacks then run as on any existing database); anything
// else, or no template at all (`npm ci --ignore-scripts`), and the database is created as before.
// See docs/decisions.md, "Start-up".

/** Where the template lives: inside node_modules, so that a new install makes a new one. */
export const PGLITE_TEMPLATE_DIR = path.resolve(import.meta.dirname, '../../../node_modules/.cache/voice-agent-platform/pglite-template');
/** The file beside a template directory that says what it holds. */
export const pgliteTemplateInfoFile = (dir: string) => `${dir}.json`;

export interface PgliteTemplateInfo {
  /** The @electric-sql/pglite version that made the directory (its on-disk format). */
  pglite: string;
  /** The migrations applied to it, in order. */
  migrations: string[];
}

/** What a template made now by this code holds. */
export function currentTemplateInfo(): PgliteTemplateInfo {
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  let dir = path.dirname(entry);
  while (!fs.existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
  const { version } = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string };
  return { pglite: version, migrations: Object.keys(migrations).sort() };
}

/** The template directory when it exists and suits this code, else undefined. */
export function usablePgliteTemplate(dir = PGLITE_TEMPLATE_DIR): string | undefined {
  let info: PgliteTemplateInfo;
  try {
    info = JSON.parse(fs.readFileSync(pgliteTemplateInfoFile(dir), 'utf8')) as PgliteTemplateInfo;
  } catch {
    return undefined;
  }
  const current = currentTemplateInfo();
  if (info.pglite !== current.pglite || !Array.isArray(info.migrations)) return undefined;
  if (info.migrations.some((name, i) => current.migrations[i] !== name)) return undefined;
  return fs.existsSync(path.join(dir, 'PG_VERSION')) ? dir : undefined;
}

/**
 * Copies the template to `target` when no database is there yet (no directory, or an empty one),
 * through a sibling directory renamed into place, so a copy cut short never looks like a database.
 * True when it copied; an existing database is never touched.
 */
export function seedPgliteDir(target: string, template: string): boolean {
  if (fs.existsSync(target)) {
    if (fs.readdirSync(target).length > 0) return false;
    fs.rmdirSync(target);
  }
  fs.mkdirSync(path.dirname(target), { recursive: true });
  const partial = `${target}.copying-${process.pid}`;
  fs.rmSync(partial, { recursive: true, force: true });
  // A copy-on-write clone where the file system offers it (btrfs, XFS), a plain copy elsewhere.
  fs.cpSync(template, partial, { recursive: true, mode: fs.constants.COPYFILE_FICLONE });
  try {
    fs.renameSync(partial, target);
  } catch (error) {
    fs.rmSync(partial, { recursive: true, force: true });
    if (fs.existsSync(target)) return false;
    throw error;
  }
  return true;
}

/** Records what a template directory just made holds (written last: a template without it is not used). */
export function writeTemplateInfo(dir: string, info: PgliteTemplateInfo): void {
  fs.writeFileSync(pgliteTemplateInfoFile(dir), `${JSON.stringify(info, null, 2)}\n`);
}
