import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startFakeEmbeddingsServer } from '../../../test/fakes/openai/embeddings.ts';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp } from '../../../test/support/fixtures.ts';
import { createOpenAiEmbeddings } from '../../providers/embeddings/openai.ts';
import { candidateTiers, lexemeQuery } from './full-text.ts';
import { createKnowledgeSearch } from './search.ts';
import { addText, createBase, query } from './test-helpers.ts';
import { nearestInMatrix } from './vectors.ts';

// The search's bounded candidate set, its exact lexeme queries, its vector scan and the vector
// cache's invalidation across instances.

describe('knowledge search', async () => {
  const t = await buildTestApp();

  it('matches a hyphenated word by its own lexeme (re-parsing `t-mobil` asked for a stop word the chunk lacks)', async () => {
    const user = await signUp(t);
    const base = await createBase(t, user, { name: 'Carriers', language: 'en' });
    const exact = await addText(t, user, base.id, 'Carrier', 'Our T-Mobile plan includes roaming.');
    await addText(t, user, base.id, 'Plans', 'Mobile plans vary by country.');
    const results = await query(t, user, base.id, 'T-Mobile');
    assert.equal(results[0]?.source_id, exact.id);
    assert.ok(results[0].score > results[1].score, JSON.stringify(results.map((r) => [r.text, r.score])));
  });

  it('ranks the chunk holding every word when each word alone has more chunks than the cap', async () => {
    const user = await signUp(t);
    const base = await createBase(t, user, { name: 'Greek', language: 'en' });
    for (let i = 0; i < 6; i++) await addText(t, user, base.id, `A${i}`, `Alpha item${i}x.`);
    for (let i = 0; i < 6; i++) await addText(t, user, base.id, `B${i}`, `Beta thing${i}y.`);
    const both = await addText(t, user, base.id, 'Both', 'Alpha meets beta.');
    // 7 chunks per word, 4 ranked at most: the chunk with both words is among them (it was added last).
    const search = createKnowledgeSearch({ db: t.platform.db, maxRankedChunks: 4 });
    const results = await search.search(user.workspaceId, [base.id], 'alpha beta', 3);
    assert.equal(results[0]?.source_id, both.id);
    // Each word's rarest chunks stay whole when they fit: a rare word is never cut.
    const tiers = candidateTiers(
      [
        { lexeme: 'common', query: "'common'", df: 300 },
        { lexeme: 'rare', query: "'rare'", df: 2 },
        { lexeme: 'middle', query: "'middle'", df: 150 },
      ],
      200,
    );
    assert.deepEqual(tiers[0], { query: "'rare'", limit: 200 });
    assert.deepEqual(tiers[1], { query: "'middle'", limit: 198 });
    assert.deepEqual(tiers.slice(2), []);
    assert.equal(lexemeQuery("o'brien\\x"), "'o''brien\\\\x'");
  });

  it('scans vectors for the nearest rows, best first', () => {
    const matrix = new Float32Array([1, 0, 0, 1, 0.6, 0.8, -1, 0, 0.8, 0.6]);
    assert.deepEqual(
      nearestInMatrix(matrix, 2, new Float32Array([1, 0]), 3).map((n) => n.row),
      [0, 4, 2],
    );
    assert.equal(nearestInMatrix(matrix, 2, new Float32Array([1, 0]), 10).length, 5);
    assert.deepEqual(nearestInMatrix(matrix, 3, new Float32Array([1, 0]), 3), []);
  });

  it('another instance sees a source added or deleted on its next query (its vector cache follows the base version)', async (ctx) => {
    const server = await startFakeEmbeddingsServer();
    ctx.after(() => server.close());
    const app = await buildTestApp({ env: { EMBEDDINGS_BASE_URL: server.baseUrl, EMBEDDINGS_MODEL: 'fake-embed-1' }, t: ctx });
    const user = await signUp(app);
    const base = await createBase(app, user, { name: 'Ferries', language: 'en' });
    await addText(app, user, base.id, 'Ferry', 'The ferry leaves at seven.');
    // Only stop words: no full-text match, so only the vectors can find the chunk.
    const q = 'between again further';
    const other = createKnowledgeSearch({ db: app.platform.db, embeddings: createOpenAiEmbeddings({ baseUrl: server.baseUrl, model: 'fake-embed-1' }) });
    assert.deepEqual(await createKnowledgeSearch({ db: app.platform.db }).search(user.workspaceId, [base.id], q, 5), []);
    assert.deepEqual(await other.search(user.workspaceId, [base.id], q, 5), []); // vectors cached now
    const ferry = await other.search(user.workspaceId, [base.id], 'ferry at seven', 1);

    const added = await addText(app, user, base.id, 'Words', 'Between again further.');
    const found = await other.search(user.workspaceId, [base.id], q, 5);
    assert.equal(found[0]?.source_id, added.id);

    const res = await app.request({ method: 'DELETE', url: `/v1/knowledge-base/${base.id}/sources/${added.id}`, token: user.accessToken, workspaceId: user.workspaceId });
    assert.equal(res.statusCode, 204);
    assert.ok((await other.search(user.workspaceId, [base.id], q, 5)).every((r) => r.source_id !== added.id));
    // The chunks that stayed kept their vectors (copied from the previous cache, not re-read).
    assert.deepEqual(await other.search(user.workspaceId, [base.id], 'ferry at seven', 1), ferry);
  });
});
