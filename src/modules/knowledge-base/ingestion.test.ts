import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp, type TestUser } from '../../../test/support/fixtures.ts';
import { newId } from '../../platform/ids.ts';
import { chunkText } from './chunking.ts';
import { prepareText } from './ingest-worker.ts';
import { MAX_QUERY_TERMS } from './search.ts';
import { PACK_FROM_CHARS, packContent, unpackContent } from './stored-content.ts';
import { addText, createBase, query } from './test-helpers.ts';

// Large sources (issue 13): extraction and chunking in the worker threads, chunks written in
// short batches as a hidden generation and published at once, the text stored compressed, and
// the bounds on a query's work.

/** At most `chars` characters of distinct paragraphs (nearly that many), the last one holding a fact to search for. */
function largeText(chars: number): string {
  const fact = 'The lighthouse at Cape Wrath is painted ochre and blinks every nine seconds.';
  const paragraphs: string[] = [];
  let length = fact.length;
  for (let i = 0; ; i++) {
    const paragraph = `Paragraph ${i} of the harbour handbook. Crane number ${i} lifts containers onto ship ${i % 97} at berth ${i % 13}; its operator logs every lift in ledger w${i}x before the evening shift changes over.`;
    if (length + paragraph.length + 2 > chars) break;
    paragraphs.push(paragraph);
    length += paragraph.length + 2;
  }
  paragraphs.push(fact);
  return paragraphs.join('\n\n');
}

describe('knowledge base ingestion', async () => {
  const t = await buildTestApp();
  const as = (user: TestUser) => ({ token: user.accessToken, workspaceId: user.workspaceId });

  async function allChunks(user: TestUser, baseId: string, sourceId: string) {
    const chunks: Array<{ position: number; text: string }> = [];
    let cursor: string | null = null;
    do {
      const page = await t.request({ method: 'GET', url: `/v1/knowledge-base/${baseId}/sources/${sourceId}/chunks?limit=100${cursor ? `&cursor=${cursor}` : ''}`, ...as(user) });
      assert.equal(page.statusCode, 200, page.body);
      chunks.push(...page.json().data);
      cursor = page.json().next_cursor;
    } while (cursor);
    return chunks;
  }

  it('indexes a 900,000-character text with all its chunks in order, stores it compressed, and a refresh re-chunks it', async () => {
    const user = await signUp(t);
    const kb = await createBase(t, user);
    const text = largeText(900_000);
    assert.ok(text.length <= 900_000 && text.length > 899_000);
    const expected = chunkText(text);
    const res = await t.request({ method: 'POST', url: `/v1/knowledge-base/${kb.id}/sources`, ...as(user), payload: { type: 'text', title: 'Handbook', text } });
    assert.equal(res.statusCode, 201, res.body);
    const source = res.json();
    assert.equal(source.status, 'ready');
    assert.equal(source.chunk_count, expected.length);
    assert.equal(source.bytes, Buffer.byteLength(text));

    const chunks = await allChunks(user, kb.id, source.id);
    assert.deepEqual(chunks.map((c) => c.position), expected.map((_, i) => i));
    assert.deepEqual(chunks.map((c) => c.text), expected);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from knowledge_chunks where source_id = ${source.id}`.execute(t.platform.db);
    assert.equal(rows[0].n, expected.length, 'no chunk beyond the published ones');
    const hits = await query(t, user, kb.id, 'What colour is the lighthouse at Cape Wrath?');
    assert.match(hits[0].text, /painted ochre/);

    const stored = await t.platform.db.selectFrom('knowledge_sources').select('content').where('id', '=', source.id).executeTakeFirstOrThrow();
    assert.ok(stored.content && stored.content.length < text.length / 2, `stored ${stored.content?.length} characters`);
    assert.equal(unpackContent(stored.content), text);

    const refreshed = await t.request({ method: 'POST', url: `/v1/knowledge-base/${kb.id}/sources/${source.id}/refresh`, ...as(user) });
    assert.equal(refreshed.statusCode, 200, refreshed.body);
    assert.equal(refreshed.json().status, 'ready');
    assert.equal(refreshed.json().chunk_count, expected.length);
    const again = await allChunks(user, kb.id, source.id);
    assert.deepEqual(again.map((c) => c.text), expected);
  });

  it('answers other requests while a large source is being indexed, the base showing processing', async () => {
    const user = await signUp(t);
    const kb = await createBase(t, user);
    let done = false;
    const adding = t.request({ method: 'POST', url: `/v1/knowledge-base/${kb.id}/sources`, ...as(user), payload: { type: 'text', title: 'Handbook', text: largeText(300_000) } }).then((res) => {
      done = true;
      return res;
    });
    // The source row is written before its chunks; in one transaction with them, it would never be seen processing.
    let status = '';
    // Each poll yields to the event loop first, as requests arriving over a socket do: with the gate's
    // verdicts cached, an injected request on PGlite can complete in microtasks alone, and a loop of
    // them would never let the ingestion's worker-thread replies in.
    while (!done && status !== 'processing') {
      await new Promise((resolve) => setImmediate(resolve));
      status = (await t.request({ method: 'GET', url: `/v1/knowledge-base/${kb.id}`, ...as(user) })).json().status;
    }
    assert.equal(status, 'processing', 'the ingestion never let another request in');
    const health = await t.request({ method: 'GET', url: '/v1/health' });
    assert.equal(health.statusCode, 200, health.body);
    assert.equal(done, false, '/v1/health waited for the ingestion');
    const res = await adding;
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().status, 'ready');
    assert.equal((await t.request({ method: 'GET', url: `/v1/knowledge-base/${kb.id}`, ...as(user) })).json().status, 'ready');
  });

  it('hides the chunks of an ingestion in progress; a refresh after an abandoned one drops them', async () => {
    const user = await signUp(t);
    const kb = await createBase(t, user);
    const source = await addText(t, user, kb.id, 'Garden', 'Tomatoes need six hours of sunlight a day.');
    const db = t.platform.db;
    const base = await db.selectFrom('knowledge_bases').select('ts_config').where('id', '=', kb.id).executeTakeFirstOrThrow();
    // An ingestion claims the source and writes the first chunk of its generation.
    const claimed = new Date();
    await db.updateTable('knowledge_sources').set({ status: 'processing', updated_at: claimed }).where('id', '=', source.id).execute();
    const staged = 'Zebrafish glow under blue light in the garden pond.';
    await db
      .insertInto('knowledge_chunks')
      .values({ id: newId('chk'), workspace_id: user.workspaceId, knowledge_base_id: kb.id, source_id: source.id, position: 0, text: staged, tsv: sql`to_tsvector(${base.ts_config}::regconfig, ${staged})`, embedding: null, embedding_model: null, created_at: claimed })
      .execute();

    assert.deepEqual(await query(t, user, kb.id, 'zebrafish pond'), []);
    assert.equal((await query(t, user, kb.id, 'tomatoes sunlight')).length, 1, 'the previous chunks stay searchable');
    assert.deepEqual((await allChunks(user, kb.id, source.id)).map((c) => c.text), ['Tomatoes need six hours of sunlight a day.']);
    const busy = await t.request({ method: 'POST', url: `/v1/knowledge-base/${kb.id}/sources/${source.id}/refresh`, ...as(user) });
    assert.equal(busy.statusCode, 409, busy.body);

    // The ingestion dies; ten minutes later a refresh takes the source over.
    const abandoned = new Date(Date.now() - 10 * 60_000);
    await db.updateTable('knowledge_sources').set({ updated_at: abandoned }).where('id', '=', source.id).execute();
    await db.updateTable('knowledge_chunks').set({ created_at: abandoned }).where('text', '=', staged).execute();
    const refreshed = await t.request({ method: 'POST', url: `/v1/knowledge-base/${kb.id}/sources/${source.id}/refresh`, ...as(user) });
    assert.equal(refreshed.statusCode, 200, refreshed.body);
    assert.equal(refreshed.json().status, 'ready');
    assert.deepEqual(await query(t, user, kb.id, 'zebrafish pond'), []);
    assert.equal((await db.selectFrom('knowledge_chunks').select('id').where('text', '=', staged).execute()).length, 0);
    assert.deepEqual((await allChunks(user, kb.id, source.id)).map((c) => c.text), ['Tomatoes need six hours of sunlight a day.']);
  });

  it(`uses the first ${MAX_QUERY_TERMS} distinct words of a query, and refuses one over 2,000 characters`, async () => {
    const user = await signUp(t);
    const kb = await createBase(t, user);
    await addText(t, user, kb.id, 'Lamp', 'The lighthouse keeper polishes the brass lamp every evening.');
    const filler = Array.from({ length: MAX_QUERY_TERMS }, (_, i) => `quorbel${i}x`).join(' ');
    assert.equal((await query(t, user, kb.id, `lighthouse ${filler}`)).length, 1);
    assert.deepEqual(await query(t, user, kb.id, `${filler} lighthouse`), []);
    // Repeated words count once.
    assert.equal((await query(t, user, kb.id, `${'quorbel0x '.repeat(100)}lighthouse`)).length, 1);
    const long = await t.request({ method: 'POST', url: `/v1/knowledge-base/${kb.id}/query`, ...as(user), payload: { query: 'a'.repeat(2001) } });
    assert.equal(long.statusCode, 422, long.body);
    assert.equal(long.json().errors[0].path, 'query');
  });
});

describe('stored source text', () => {
  it('compresses long texts only, and reads back every form', () => {
    const short = 'Owls hunt at night.';
    assert.equal(packContent(short), short);
    assert.equal(unpackContent(short), short);
    const long = 'Owls hunt at night; bats hunt at dusk. '.repeat(Math.ceil(PACK_FROM_CHARS / 30));
    const packed = packContent(long);
    assert.ok(packed.length < long.length / 10);
    assert.equal(unpackContent(packed), long);
    // Text stored before this format, however long, reads as itself.
    assert.equal(unpackContent(long), long);
  });

  it('drops NUL characters, which PostgreSQL refuses in text', () => {
    const prepared = prepareText({ text: 'We open\u0000 at nine.' });
    assert.deepEqual(prepared.chunks, ['We open at nine.']);
    assert.equal(unpackContent(prepared.stored), 'We open at nine.');
  });
});
