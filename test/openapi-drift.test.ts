import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { it } from 'node:test';
import { renderOpenApi } from './support/openapi.ts';

it('the committed openapi.json matches the routes (run `npm run openapi:write` after changing a route)', async () => {
  const committed = fs.readFileSync(path.join(import.meta.dirname, '..', 'openapi.json'), 'utf8');
  const generated = await renderOpenApi();
  assert.equal(committed, generated);
});
