import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';

// Where test code lives: the providers' protocol fakes in test/fakes/, never in src/, and product
// code (src/ but its tests and the test helpers beside them) never reaches into test/, so nothing
// a test needs ships as the product or is loaded by it.

const root = path.resolve(import.meta.dirname, '..');
const src = path.join(root, 'src');
const testDir = path.join(root, 'test');

/** Test files and the helpers kept beside them in src/ (they build on test/support/). */
const TEST_CODE_IN_SRC = /\.test\.ts$|^(test-helpers|browser-helpers|test-support|testing)\.ts$/;

const sourceFiles = fs
  .readdirSync(src, { recursive: true })
  .map(String)
  .filter((f) => /\.(ts|mts|cts|tsx|js|mjs|cjs)$/.test(f))
  .map((f) => path.join(src, f));
const productFiles = sourceFiles.filter((f) => !TEST_CODE_IN_SRC.test(path.basename(f)));

/** Every relative module a file names: imports, re-exports, dynamic imports, and worker URLs. */
function relativeModules(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  const specifiers = /(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*|\bnew URL\s*\(\s*)['"`](\.{1,2}\/[^'"`]+)['"`]/g;
  return [...text.matchAll(specifiers)].map((m) => path.resolve(path.dirname(file), m[1]));
}

const inside = (dir: string, file: string) => !path.relative(dir, file).startsWith('..');
const shown = (file: string) => path.relative(root, file);

describe('layout of test code', () => {
  it('no file or folder under src/ is a fake (fakes live in test/fakes/)', () => {
    const fakes = fs
      .readdirSync(src, { recursive: true })
      .map(String)
      .filter((f) => /fake/i.test(path.basename(f)))
      .map((f) => path.join('src', f));
    assert.deepEqual(fakes, [], 'move these to test/fakes/<provider>/');
  });

  it('product code imports nothing from test/, nor a test or test helper in src/', () => {
    assert.ok(productFiles.length > 100, `product files found: ${productFiles.length}`);
    const offences = productFiles.flatMap((file) =>
      relativeModules(file)
        .filter((target) => inside(testDir, target) || (inside(src, target) && TEST_CODE_IN_SRC.test(path.basename(target))))
        .map((target) => `${shown(file)} → ${shown(target)}`),
    );
    assert.deepEqual(offences, []);
  });
});
