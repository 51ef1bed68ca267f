import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { it } from 'node:test';
import { LEAKS_FILE, OPERATIONS_FILE } from './support/coverage.ts';

// Run by scripts/run-tests.mjs after the whole suite, over what test/support/coverage.ts recorded:
// every operation in the committed openapi.json must have been called by at least one test, and
// no response of any test may have leaked a secret or a stack trace.

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

function recorded(pattern: RegExp): string[] {
  const dir = process.env.TEST_COVERAGE_DIR;
  assert.ok(dir, 'TEST_COVERAGE_DIR is set by scripts/run-tests.mjs');
  return fs
    .readdirSync(dir)
    .filter((file) => pattern.test(file))
    .flatMap((file) => fs.readFileSync(path.join(dir, file), 'utf8').split('\n').filter(Boolean));
}

it('every operation in openapi.json is called by the test suite', () => {
  const spec = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '..', 'openapi.json'), 'utf8'));
  const called = new Set(recorded(OPERATIONS_FILE));
  const operations = Object.entries(spec.paths as Record<string, Record<string, unknown>>).flatMap(([p, item]) =>
    Object.keys(item).filter((m) => METHODS.includes(m)).map((m) => `${m.toUpperCase()} ${p}`),
  );
  assert.ok(operations.length > 0, 'openapi.json lists operations');
  const missing = operations.filter((op) => !called.has(op));
  assert.deepEqual(missing, [], `operations never called by a test:\n${missing.join('\n')}`);
});

it('no response of the suite leaked a secret hash or a stack trace', () => {
  const leaks = [...new Set(recorded(LEAKS_FILE))];
  assert.deepEqual(leaks, [], `responses that leaked (see test/support/coverage.ts):\n${leaks.join('\n')}`);
});
