import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ERROR_STATUS } from '../src/platform/errors.ts';
import { buildTestApp } from './support/app.ts';

// Every problem `type` resolves to the platform's own page (DESIGN part 9): `<PUBLIC_BASE_URL>/docs/errors#<code>`,
// served at that path, with a section for every code the code base can emit.

const t = await buildTestApp({ env: { PUBLIC_BASE_URL: 'https://voice.example.com' } });
const root = path.resolve(import.meta.dirname, '..');

/** Codes the product code raises or renders, read from its source (a cast past the catalog's type would show here). */
function emittedCodes(): Set<string> {
  const codes = new Set<string>();
  const patterns = [/new AppError\(\s*'(\w+)'/g, /sendProblem\(\s*\w+,\s*'(\w+)'/g, /\bcode: '(\w+)' as const/g, /: ErrorCode =[^;]*/g];
  const files = (fs.readdirSync(path.join(root, 'src'), { recursive: true }) as string[]).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));
  for (const file of files) {
    const text = fs.readFileSync(path.join(root, 'src', file), 'utf8');
    for (const pattern of patterns) {
      for (const match of text.matchAll(pattern)) {
        if (match[1]) codes.add(match[1]);
        // A conditional choosing a code: its outcomes (after ? and :), not what it compares.
        else for (const literal of match[0].matchAll(/[?:] '(\w+)'/g)) codes.add(literal[1]);
      }
    }
  }
  return codes;
}

describe('the error codes page', () => {
  it('a problem type is the page on the platform, and the page has the section it names', async () => {
    const res = await t.request({ method: 'GET', url: '/v1/agents/agent_nope' });
    const type = new URL(res.json().type);
    assert.equal(type.origin, 'https://voice.example.com');
    assert.equal(type.pathname, '/docs/errors');
    assert.equal(type.hash, '#unauthorized');
    const page = await t.request({ method: 'GET', url: type.pathname });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.ok(page.body.includes(`<section id="unauthorized">`));
  });

  it('lists every code the code base can emit, each with its status, meaning and fix', async () => {
    const page = (await t.request({ method: 'GET', url: '/docs/errors' })).body;
    const emitted = emittedCodes();
    assert.ok(emitted.size >= 20, `the scan finds the codes in use (${emitted.size})`);
    for (const code of new Set([...Object.keys(ERROR_STATUS), ...emitted])) {
      const section = new RegExp(`<section id="${code}"><h2>.*?</h2><p class="status">HTTP (\\d+) [^<]+</p><p><strong>Meaning.</strong> .{10,}?</p><p><strong>Fix.</strong> .{10,}?</p></section>`).exec(page);
      assert.ok(section, `${code} has its section`);
      assert.equal(Number(section[1]), ERROR_STATUS[code as keyof typeof ERROR_STATUS], `${code}: its status`);
    }
  });
});
