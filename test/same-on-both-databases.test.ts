import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
// @ts-expect-error: a plain ES module of the scripts folder, without types
import { sameOnBothDatabases } from '../scripts/same-on-both-databases.mjs';

// CI's PostgreSQL run leaves out the files that never read TEST_DATABASE_URL (docs/testing.md,
// "Two databases"): they would run the very same test a second time. A file that reaches a
// reader by an import, or by a script it spawns, must stay on both databases.

const sameOnBoth = sameOnBothDatabases as (root: string, file: string) => boolean;

function tree(files: Record<string, string>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-both-'));
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    fs.writeFileSync(path.join(root, name), text);
  }
  return root;
}

describe('the files that run the same on both databases', () => {
  const root = tree({
    'test/support/database.ts': "export const url = process.env.TEST_DATABASE_URL;\n",
    'test/support/clock.ts': "export const now = () => 0;\n",
    'src/a/pure.test.ts': "import { now } from '../../test/support/clock.ts';\n",
    'src/a/reads.test.ts': "import { now } from '../../test/support/clock.ts';\nimport { url } from '../../test/support/database.ts';\n",
    'src/a/deep.test.ts': "import { x } from './middle.ts';\n",
    'src/a/middle.ts': "export { url as x } from '../../test/support/database.ts';\n",
    'src/a/spawns.test.ts': "spawn(process.execPath, [path.join(import.meta.dirname, 'child.ts')]);\n",
    'src/a/child.ts': "const url = process.env.TEST_DATABASE_URL;\n",
    'src/a/itself.test.ts': "if (process.env.TEST_DATABASE_URL) run();\n",
    'src/a/cycle.test.ts': "import './cycle-b.ts';\n",
    'src/a/cycle-b.ts': "import './cycle.test.ts';\nconst name = 'missing.ts';\n",
    'src/a/folder.ts/index.ts': "",
    'src/a/names-folder.test.ts': "import './folder.ts';\n",
  });

  it('keeps a file that reads it, or imports, deeply or not, or spawns a reader, on both', () => {
    for (const file of ['src/a/reads.test.ts', 'src/a/deep.test.ts', 'src/a/spawns.test.ts', 'src/a/itself.test.ts']) {
      assert.equal(sameOnBoth(root, file), false, file);
    }
  });

  it('runs a file whose modules never read it once, through cycles, missing names and folders', () => {
    for (const file of ['src/a/pure.test.ts', 'src/a/cycle.test.ts', 'src/a/names-folder.test.ts']) {
      assert.equal(sameOnBoth(root, file), true, file);
    }
  });

  it('in this repository: a file on the test database stays on both, a runtime file runs once', () => {
    const repo = path.resolve(import.meta.dirname, '..');
    assert.equal(sameOnBoth(repo, 'src/modules/calls/calls.test.ts'), false);
    assert.equal(sameOnBoth(repo, 'src/modules/webhooks/crash.test.ts'), false);
    assert.equal(sameOnBoth(repo, 'src/runtime/call-session.test.ts'), true);
  });
});
