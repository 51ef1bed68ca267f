// Which test files run the same on PGlite and on PostgreSQL: a file chooses its database only
// through TEST_DATABASE_URL (test/support/database.ts reads it; a few files read it themselves), so
// a file none of whose modules reads it runs the very same test twice when CI runs `npm test` on
// each database. scripts/run-tests.mjs runs those files on PGlite only.
//
// The modules of a file are found by reading their text: every quoted relative path that names an
// existing .ts, .mjs or .js file (imports, and the scripts a test spawns, such as a crash child or
// src/server.ts), followed to the end. A file is left on both databases when any of them holds the
// name TEST_DATABASE_URL, so a new reader keeps its file on both without anyone updating a list.
import fs from 'node:fs';
import path from 'node:path';

const QUOTED_SCRIPT = /['"`]([^'"`\s]+\.(?:ts|mjs|js))['"`]/g;

/** Answers whether `file` (relative to `root`) never reaches a module that reads TEST_DATABASE_URL. */
export function sameOnBothDatabases(root, file) {
  const seen = new Set();
  const reaches = (relative) => {
    if (seen.has(relative)) return false;
    seen.add(relative);
    const text = fs.readFileSync(path.join(root, relative), 'utf8');
    if (text.includes('TEST_DATABASE_URL')) return true;
    for (const [, quoted] of text.matchAll(QUOTED_SCRIPT)) {
      for (const base of [path.dirname(relative), '.']) {
        const candidate = path.normalize(path.join(base, quoted));
        if (candidate.startsWith('..') || path.isAbsolute(candidate)) continue;
        if (fs.statSync(path.join(root, candidate), { throwIfNoEntry: false })?.isFile() && reaches(candidate)) return true;
      }
    }
    return false;
  };
  return !reaches(path.normalize(file));
}
