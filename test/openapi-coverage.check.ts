import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { it } from 'node:test';

// Run by scripts/run-tests.mjs after the whole suite: every operation in the committed
// openapi.json must have been called by at least one test (recorded by test/support/coverage.ts).

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

it('every operation in openapi.json is called by the test suite', () => {
  const spec = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '..', 'openapi.json'), 'utf8'));
  const dir = process.env.TEST_COVERAGE_DIR;
  assert.ok(dir, 'TEST_COVERAGE_DIR is set by scripts/run-tests.mjs');
  const called = new Set(
    fs.readdirSync(dir).flatMap((file) => fs.readFileSync(path.join(dir, file), 'utf8').split('\n').filter(Boolean)),
  );
  const operations = Object.entries(spec.paths as Record<string, Record<string, unknown>>).flatMap(([p, item]) =>
    Object.keys(item).filter((m) => METHODS.includes(m)).map((m) => `${m.toUpperCase()} ${p}`),
  );
  assert.ok(operations.length > 0, 'openapi.json lists operations');
  const missing = operations.filter((op) => !called.has(op));
  assert.deepEqual(missing, [], `operations never called by a test:\n${missing.join('\n')}`);
});
