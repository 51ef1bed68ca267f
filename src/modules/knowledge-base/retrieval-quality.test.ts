import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp } from '../../../test/support/fixtures.ts';
import { startFakeEmbeddingsServer } from '../../providers/embeddings/fake-server.ts';
import { QUESTIONS, createBase, query, squash, uploadFixture } from './test-helpers.ts';

// Retrieval quality over the committed fixtures (a Markdown guide, an HTML FAQ page, a PDF
// handbook) and reworded questions: the chunk holding each answer's unique phrase must be in the
// top 3 for at least 90 % of the questions, with full-text search alone and with embeddings.

const DOCUMENTS = ['guide.md', 'page.html', 'manual.pdf'];
const REQUIRED_RATE = 0.9;

async function measure(env: Record<string, string>, diagnostic: (message: string) => void) {
  const t = await buildTestApp({ env });
  const user = await signUp(t);
  const base = await createBase(t, user, { name: 'Harborline help center', language: 'en' });
  for (const document of DOCUMENTS) {
    const source = await uploadFixture(t, user, base.id, document);
    assert.equal(source.status, 'ready');
  }
  let hits = 0;
  let first = 0;
  const misses: string[] = [];
  for (const q of QUESTIONS) {
    const results = await query(t, user, base.id, q.question, 3);
    if (results[0] && squash(results[0].text).includes(squash(q.phrase))) first++;
    if (results.some((r) => squash(r.text).includes(squash(q.phrase)))) hits++;
    else misses.push(`${q.question} → ${results.map((r) => squash(r.text).slice(0, 60)).join(' | ')}`);
  }
  const rate = hits / QUESTIONS.length;
  diagnostic(`top-3 hit rate ${(rate * 100).toFixed(1)} % (${hits}/${QUESTIONS.length}); top-1 ${((first / QUESTIONS.length) * 100).toFixed(1)} %`);
  for (const miss of misses) diagnostic(`miss: ${miss}`);
  return rate;
}

describe('retrieval quality', () => {
  it('has at least 30 reworded questions over 3 documents of different formats, each phrase unique', () => {
    assert.ok(QUESTIONS.length >= 30);
    assert.deepEqual([...new Set(QUESTIONS.map((q) => q.document))].sort(), [...DOCUMENTS].sort());
    for (const q of QUESTIONS) assert.ok(!squash(q.question).includes(squash(q.phrase)), `question copies its phrase: ${q.question}`);
  });

  it('finds the answer chunk in the top 3 for ≥ 90 % of questions (full-text)', async (t) => {
    const rate = await measure({}, (m) => t.diagnostic(m));
    assert.ok(rate >= REQUIRED_RATE, `hit rate ${rate}`);
  });

  it('finds the answer chunk in the top 3 for ≥ 90 % of questions (hybrid, embeddings from a fake OpenAI-compatible server)', async (t) => {
    const server = await startFakeEmbeddingsServer();
    after(() => server.close());
    const rate = await measure({ EMBEDDINGS_BASE_URL: server.baseUrl, EMBEDDINGS_MODEL: 'fake-embed-1' }, (m) => t.diagnostic(m));
    assert.ok(server.requests.length > 0, 'the embeddings server was called');
    assert.ok(rate >= REQUIRED_RATE, `hit rate ${rate}`);
  });
});
