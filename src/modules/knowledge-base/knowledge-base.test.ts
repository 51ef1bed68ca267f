import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../../../test/support/app.ts';
import { signUp, type TestUser } from '../../../test/support/fixtures.ts';
import { securitySuite } from '../../../test/support/security.ts';
import { startFakeEmbeddingsServer } from '../../../test/fakes/openai/embeddings.ts';
import { createOpenAiEmbeddings } from '../../providers/embeddings/openai.ts';
import { makeDocx, makePdf } from './fixtures/documents.ts';
import { createKnowledgeSearch, missingKnowledgeBaseIds } from './search.ts';
import { FIXTURES, addText, createBase, multipart, query } from './test-helpers.ts';

const LONG_TEXT = Array.from({ length: 12 }, (_, i) =>
  `Section ${i + 1}. The lighthouse keeper number ${i + 1} polishes the brass lamp every evening. Storms on the northern coast arrive without warning, so the keeper logs the barometer reading twice a night. Visitors may climb the tower only on Sundays between ten and noon.`,
).join('\n\n');

describe('knowledge base', async () => {
  const t = await buildTestApp();
  const as = (user: TestUser) => ({ token: user.accessToken, workspaceId: user.workspaceId });

  // A small site for URL sources; its pages can be changed by the tests.
  const pages = new Map<string, { status: number; type: string; body: string | Buffer }>();
  const site = http.createServer((req, res) => {
    const page = pages.get(req.url ?? '');
    if (!page) return void res.writeHead(404).end('missing');
    res.writeHead(page.status, { 'content-type': page.type }).end(page.body);
  });
  let siteUrl = '';
  before(async () => {
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => site.close(() => resolve())));

  describe('knowledge bases', () => {
    it('creates, reads, lists, updates and deletes a knowledge base', async () => {
      const user = await signUp(t);
      const created = await t.request({ method: 'POST', url: '/v1/knowledge-base', ...as(user), payload: { name: 'Help center', description: 'FAQ' } });
      assert.equal(created.statusCode, 201, created.body);
      const kb = created.json();
      assert.match(kb.id, /^kb_[0-9a-z]{26}$/);
      assert.deepEqual({ ...kb, id: undefined, created_at: undefined, updated_at: undefined }, {
        id: undefined, created_at: undefined, updated_at: undefined,
        name: 'Help center', description: 'FAQ', language: 'en', source_count: 0, chunk_count: 0, status: 'empty',
      });

      const got = await t.request({ method: 'GET', url: `/v1/knowledge-base/${kb.id}`, ...as(user) });
      assert.equal(got.statusCode, 200);
      assert.deepEqual(got.json(), kb);

      const second = await createBase(t, user, { name: 'Second', language: 'fr' });
      const list = await t.request({ method: 'GET', url: '/v1/knowledge-base?limit=1', ...as(user) });
      assert.equal(list.statusCode, 200);
      assert.deepEqual(list.json().data.map((k: { id: string }) => k.id), [second.id]);
      assert.equal(list.json().has_more, true);
      const next = await t.request({ method: 'GET', url: `/v1/knowledge-base?limit=1&cursor=${list.json().next_cursor}`, ...as(user) });
      assert.deepEqual(next.json().data.map((k: { id: string }) => k.id), [kb.id]);
      assert.equal(next.json().has_more, false);

      const patched = await t.request({ method: 'PATCH', url: `/v1/knowledge-base/${kb.id}`, ...as(user), payload: { name: 'Help centre', description: null, language: 'de' } });
      assert.equal(patched.statusCode, 200, patched.body);
      const reread = (await t.request({ method: 'GET', url: `/v1/knowledge-base/${kb.id}`, ...as(user) })).json();
      assert.equal(reread.name, 'Help centre');
      assert.equal(reread.description, null);
      assert.equal(reread.language, 'de');

      const deleted = await t.request({ method: 'DELETE', url: `/v1/knowledge-base/${kb.id}`, ...as(user) });
      assert.equal(deleted.statusCode, 204);
      assert.equal((await t.request({ method: 'GET', url: `/v1/knowledge-base/${kb.id}`, ...as(user) })).statusCode, 404);
      assert.equal((await t.request({ method: 'DELETE', url: `/v1/knowledge-base/${kb.id}`, ...as(user) })).statusCode, 404);
    });

    it('answers 422 naming each bad field', async () => {
      const user = await signUp(t);
      const res = await t.request({ method: 'POST', url: '/v1/knowledge-base', ...as(user), payload: { language: 'english', nmae: 'typo' } });
      assert.equal(res.statusCode, 422);
      assert.deepEqual(res.json().errors.map((e: { path: string }) => e.path).sort(), ['language', 'name', 'nmae']);
      const kb = await createBase(t, user);
      const patch = await t.request({ method: 'PATCH', url: `/v1/knowledge-base/${kb.id}`, ...as(user), payload: { name: '' } });
      assert.equal(patch.statusCode, 422);
      assert.equal(patch.json().errors[0].path, 'name');
      const limit = await t.request({ method: 'GET', url: '/v1/knowledge-base?limit=0', ...as(user) });
      assert.equal(limit.statusCode, 422);
      assert.equal(limit.json().errors[0].path, 'query.limit');
    });

    it('changing the language re-indexes the chunks with the new stemmer', async () => {
      const user = await signUp(t);
      const kb = await createBase(t, user, { name: 'Recettes', language: 'fr' });
      await addText(t, user, kb.id, 'Cuisine', 'Les chevaux mangent des pommes dans les jardins du château.');
      // French stemming matches the singular forms of plural words.
      assert.equal((await query(t, user, kb.id, 'cheval jardin')).length, 1);
      const patched = await t.request({ method: 'PATCH', url: `/v1/knowledge-base/${kb.id}`, ...as(user), payload: { language: 'xx' } });
      assert.equal(patched.statusCode, 200);
      // 'simple' configuration: exact words only.
      assert.equal((await query(t, user, kb.id, 'cheval')).length, 0);
      assert.equal((await query(t, user, kb.id, 'chevaux')).length, 1);
    });
  });

  describe('sources', () => {
    it('adds a text source, chunks it with overlap, lists its chunks and finds it by query', async () => {
      const user = await signUp(t);
      const kb = await createBase(t, user);
      const res = await t.request({ method: 'POST', url: `/v1/knowledge-base/${kb.id}/sources`, ...as(user), payload: { type: 'text', title: 'Lighthouse', text: LONG_TEXT } });
      assert.equal(res.statusCode, 201, res.body);
      const source = res.json();
      assert.match(source.id, /^src_[0-9a-z]{26}$/);
      assert.equal(source.type, 'text');
      assert.equal(source.status, 'ready');
      assert.equal(source.bytes, Buffer.byteLength(LONG_TEXT));
      assert.ok(source.chunk_count >= 4, `chunk_count ${source.chunk_count}`);
      assert.equal('url' in source, false);

      const got = await t.request({ method: 'GET', url: `/v1/knowledge-base/${kb.id}/sources/${source.id}`, ...as(user) });
      assert.deepEqual(got.json(), source);
      const listed = await t.request({ method: 'GET', url: `/v1/knowledge-base/${kb.id}/sources`, ...as(user) });
      assert.deepEqual(listed.json().data, [source]);
      const base = (await t.request({ method: 'GET', url: `/v1/knowledge-base/${kb.id}`, ...as(user) })).json();
      assert.equal(base.source_count, 1);
      assert.equal(base.chunk_count, source.chunk_count);
      assert.equal(base.status, 'ready');

      const chunks: Array<{ id: string; position: number; text: string; source_id: string }> = [];
      let cursor: string | null = null;
      do {
        const page = await t.request({ method: 'GET', url: `/v1/knowledge-base/${kb.id}/sources/${source.id}/chunks?limit=2${cursor ? `&cursor=${cursor}` : ''}`, ...as(user) });
        assert.equal(page.statusCode, 200, page.body);
        chunks.push(...page.json().data);
        cursor = page.json().next_cursor;
      } while (cursor);
      assert.equal(chunks.length, source.chunk_count);
      assert.deepEqual(chunks.map((c) => c.position), chunks.map((_, i) => i));
      for (const chunk of chunks) {
        assert.match(chunk.id, /^chk_/);
        assert.equal(chunk.source_id, source.id);
        assert.ok(chunk.text.length <= 800, `chunk of ${chunk.text.length} chars`);
      }
      // Overlap: each chunk after the first starts with the end of the previous one.
      for (let i = 1; i < chunks.length; i++) {
        const head = chunks[i].text.split('\n\n')[0];
        assert.ok(chunks[i - 1].text.endsWith(head), `chunk ${i} does not overlap the previous one`);
      }
      const badCursor = await t.request({ method: 'GET', url: `/v1/knowledge-base/${kb.id}/sources/${source.id}/chunks?cursor=nonsense`, ...as(user) });
      assert.equal(badCursor.statusCode, 422);

      const results = await query(t, user, kb.id, 'When can tourists go up the tower?');
      assert.ok(results.length > 0 && results.length <= 5);
      assert.match(results[0].text, /climb the tower only on Sundays/);
      assert.equal(results[0].source_id, source.id);
      assert.ok(results[0].score > 0 && results[0].score <= 1);
      assert.equal((await query(t, user, kb.id, 'keeper', 20)).length, source.chunk_count);
      assert.deepEqual(await query(t, user, kb.id, 'the of and'), []);
    });

    it('answers 422 for invalid JSON sources and 415 for other content types', async () => {
      const user = await signUp(t);
      const kb = await createBase(t, user);
      const url = `/v1/knowledge-base/${kb.id}/sources`;
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ type: 'text', text: 'no title' }, 'title'],
        [{ type: 'text', title: 'no text' }, 'text'],
        [{ type: 'url' }, 'url'],
        [{ type: 'url', url: 'ftp://example.com/doc' }, 'url'],
        [{ type: 'file', title: 'x' }, 'type'],
        [{ type: 'text', title: 'x', text: 'y', colour: 'red' }, 'colour'],
        [{ type: 'text', title: 'x', text: '   ' }, 'text'],
      ];
      for (const [payload, field] of cases) {
        const res = await t.request({ method: 'POST', url, ...as(user), payload });
        assert.equal(res.statusCode, 422, `${JSON.stringify(payload)}: ${res.body}`);
        assert.ok(res.json().errors.some((e: { path: string }) => e.path === field), `${JSON.stringify(payload)}: ${res.body}`);
      }
      const plain = await t.request({ method: 'POST', url, ...as(user), payload: 'just text', headers: { 'content-type': 'text/plain' } });
      assert.equal(plain.statusCode, 415);
      assert.equal(plain.json().code, 'unsupported_media_type');
      const missing = await t.request({ method: 'POST', url: `/v1/knowledge-base/kb_${'0'.repeat(26)}/sources`, ...as(user), payload: { type: 'text', title: 'x', text: 'y' } });
      assert.equal(missing.statusCode, 404);
    });

    it('ingests uploaded files: Markdown, HTML, PDF, DOCX, CSV and plain text', async () => {
      const user = await signUp(t);
      const kb = await createBase(t, user);
      const upload = async (filename: string, contentType: string, data: Buffer, fields: Record<string, string> = {}) =>
        t.request({ method: 'POST', url: `/v1/knowledge-base/${kb.id}/sources`, ...as(user), ...multipart(fields, { filename, contentType, data }) });

      const md = await upload('guide.md', 'text/markdown', fs.readFileSync(path.join(FIXTURES, 'guide.md')), { title: 'Getting started' });
      assert.equal(md.statusCode, 201, md.body);
      assert.equal(md.json().type, 'file');
      assert.equal(md.json().title, 'Getting started');
      assert.equal(md.json().filename, 'guide.md');
      assert.equal(md.json().bytes, fs.statSync(path.join(FIXTURES, 'guide.md')).size);

      const docx = await upload('policy.docx', 'application/octet-stream', makeDocx(['Returns policy.', 'Parcels damaged in transit are replaced free of charge within fourteen days.']));
      assert.equal(docx.statusCode, 201, docx.body);
      assert.equal(docx.json().title, 'policy.docx');
      const pdf = await upload('notes.pdf', 'application/pdf', makePdf(['Warehouse notes.', 'The forklift battery must be charged overnight in bay seven.']));
      assert.equal(pdf.statusCode, 201, pdf.body);
      const csv = await upload('stores.csv', 'text/csv', Buffer.from('city,opening hours\nLisbon,9 to 17\nPorto,10 to 18\n'));
      assert.equal(csv.statusCode, 201, csv.body);
      const txt = await upload('readme.txt', 'text/plain', Buffer.from('\uFEFFThe greenhouse sprinklers run at dawn.'));
      assert.equal(txt.statusCode, 201, txt.body);
      const html = await upload('page.html', 'text/html', fs.readFileSync(path.join(FIXTURES, 'page.html')));
      assert.equal(html.statusCode, 201, html.body);

      assert.equal((await query(t, user, kb.id, 'damaged parcels replacement'))[0].source_id, docx.json().id);
      assert.equal((await query(t, user, kb.id, 'forklift battery charging'))[0].source_id, pdf.json().id);
      const porto = await query(t, user, kb.id, 'When does the Porto store open?');
      assert.equal(porto[0].source_id, csv.json().id);
      assert.match(porto[0].text, /city: Porto; opening hours: 10 to 18/);
      assert.equal((await query(t, user, kb.id, 'sprinklers'))[0].source_id, txt.json().id);
      // HTML: scripts, styles and navigation are not indexed.
      assert.deepEqual(await query(t, user, kb.id, 'window.analytics sans-serif'), []);
    });

    it('Idempotency-Key replays the same upload and refuses another file under the same key', async () => {
      const user = await signUp(t);
      const kb = await createBase(t, user);
      const url = `/v1/knowledge-base/${kb.id}/sources`;
      const send = (text: string) => {
        const body = multipart({ title: 'Notes' }, { filename: 'notes.txt', contentType: 'text/plain', data: Buffer.from(text) });
        return t.request({ method: 'POST', url, ...as(user), payload: body.payload, headers: { ...body.headers, 'idempotency-key': 'upload-1' } });
      };
      const first = await send('Owls hunt at night.');
      assert.equal(first.statusCode, 201, first.body);
      const again = await send('Owls hunt at night.');
      assert.equal(again.statusCode, 201);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.json().id, first.json().id);
      const other = await send('Bats hunt at dusk.');
      assert.equal(other.statusCode, 422, other.body);
      assert.equal(other.json().code, 'idempotency_key_reused');
      assert.equal((await t.request({ method: 'GET', url, ...as(user) })).json().data.length, 1);
    });

    it('answers 415 for an unsupported file type, 422 for an unreadable or empty one, 413 above 20 MiB', async () => {
      const user = await signUp(t);
      const kb = await createBase(t, user);
      const url = `/v1/knowledge-base/${kb.id}/sources`;
      const exe = await t.request({ method: 'POST', url, ...as(user), ...multipart({}, { filename: 'tool.exe', contentType: 'application/x-msdownload', data: Buffer.from('MZ') }) });
      assert.equal(exe.statusCode, 415, exe.body);
      assert.equal(exe.json().code, 'unsupported_media_type');
      const broken = await t.request({ method: 'POST', url, ...as(user), ...multipart({}, { filename: 'broken.pdf', contentType: 'application/pdf', data: Buffer.from('not a pdf') }) });
      assert.equal(broken.statusCode, 422, broken.body);
      assert.equal(broken.json().errors[0].path, 'file');
      const empty = await t.request({ method: 'POST', url, ...as(user), ...multipart({}, { filename: 'empty.txt', contentType: 'text/plain', data: Buffer.from('  \n ') }) });
      assert.equal(empty.statusCode, 422, empty.body);
      const noFile = await t.request({ method: 'POST', url, ...as(user), ...multipart({ title: 'only a title' }) });
      assert.equal(noFile.statusCode, 422, noFile.body);
      assert.equal(noFile.json().errors[0].path, 'file');
      const wrongField = await t.request({ method: 'POST', url, ...as(user), ...multipart({}, { field: 'document', filename: 'a.txt', contentType: 'text/plain', data: Buffer.from('hello') }) });
      assert.equal(wrongField.statusCode, 422, wrongField.body);
      const twoTitles = await t.request({ method: 'POST', url, ...as(user), ...multipart({ title: '', colour: 'red' }, { filename: 'a.txt', contentType: 'text/plain', data: Buffer.from('hello') }) });
      assert.equal(twoTitles.statusCode, 422, twoTitles.body);
      assert.deepEqual(twoTitles.json().errors.map((e: { path: string }) => e.path).sort(), ['colour', 'title']);
      const fileAsField = await t.request({ method: 'POST', url, ...as(user), ...multipart({ file: 'not a file' }) });
      assert.equal(fileAsField.statusCode, 422, fileAsField.body);
      const big = Buffer.alloc(20 * 1024 * 1024 + 1, 'a');
      const tooLarge = await t.request({ method: 'POST', url, ...as(user), ...multipart({}, { filename: 'big.txt', contentType: 'text/plain', data: big }) });
      assert.equal(tooLarge.statusCode, 413, tooLarge.body);
      assert.equal(tooLarge.json().code, 'payload_too_large');
      const sources = await t.request({ method: 'GET', url, ...as(user) });
      assert.deepEqual(sources.json().data, []);
    });

    it('fetches a URL source, records a failed fetch, and refresh re-fetches it', async () => {
      const user = await signUp(t);
      const kb = await createBase(t, user);
      pages.set('/faq', { status: 200, type: 'text/html; charset=utf-8', body: '<html><head><title>Ferry FAQ</title></head><body><p>The ferry to the island leaves at seven every morning.</p></body></html>' });
      const res = await t.request({ method: 'POST', url: `/v1/knowledge-base/${kb.id}/sources`, ...as(user), payload: { type: 'url', url: `${siteUrl}/faq` } });
      assert.equal(res.statusCode, 201, res.body);
      const source = res.json();
      assert.equal(source.type, 'url');
      assert.equal(source.status, 'ready');
      assert.equal(source.url, `${siteUrl}/faq`);
      assert.equal(source.title, 'Ferry FAQ');
      assert.equal(source.chunk_count, 1);
      assert.match((await query(t, user, kb.id, 'what time does the ferry depart'))[0].text, /seven every morning/);

      // The page changes: refresh indexes the new content and drops the old.
      pages.set('/faq', { status: 200, type: 'text/html', body: '<p>From June the ferry departs at eight.</p>' });
      const refreshed = await t.request({ method: 'POST', url: `/v1/knowledge-base/${kb.id}/sources/${source.id}/refresh`, ...as(user) });
      assert.equal(refreshed.statusCode, 200, refreshed.body);
      assert.equal(refreshed.json().status, 'ready');
      assert.equal(refreshed.json().title, 'Ferry FAQ');
      const after = await query(t, user, kb.id, 'ferry');
      assert.equal(after.length, 1);
      assert.match(after[0].text, /departs at eight/);

      // The page disappears: the refresh fails, the last good chunks stay searchable.
      pages.delete('/faq');
      const failed = await t.request({ method: 'POST', url: `/v1/knowledge-base/${kb.id}/sources/${source.id}/refresh`, ...as(user) });
      assert.equal(failed.statusCode, 200);
      assert.equal(failed.json().status, 'failed');
      assert.equal(failed.json().error, 'fetching the URL returned HTTP 404');
      assert.equal((await query(t, user, kb.id, 'ferry')).length, 1);

      const unreachable = await t.request({ method: 'POST', url: `/v1/knowledge-base/${kb.id}/sources`, ...as(user), payload: { type: 'url', url: `${siteUrl}/nothing-here`, title: 'Gone' } });
      assert.equal(unreachable.statusCode, 201);
      assert.equal(unreachable.json().status, 'failed');
      assert.equal(unreachable.json().title, 'Gone');
      pages.set('/binary', { status: 200, type: 'image/png', body: Buffer.from([0x89, 0x50]) });
      const image = await t.request({ method: 'POST', url: `/v1/knowledge-base/${kb.id}/sources`, ...as(user), payload: { type: 'url', url: `${siteUrl}/binary` } });
      assert.equal(image.json().status, 'failed');
      assert.match(image.json().error, /unsupported content type image\/png/);
    });

    it('refuses a private URL with 422 when private URLs are not allowed', async (ctx) => {
      const strict = await buildTestApp({ env: { ALLOW_PRIVATE_URLS: 'false' }, t: ctx });
      const user = await signUp(strict);
      const kb = await createBase(strict, user);
      for (const url of ['http://127.0.0.1:9/secret', 'http://169.254.169.254/latest/meta-data', 'http://localhost/']) {
        const res = await strict.request({ method: 'POST', url: `/v1/knowledge-base/${kb.id}/sources`, ...as(user), payload: { type: 'url', url } });
        assert.equal(res.statusCode, 422, res.body);
        assert.equal(res.json().errors[0].path, 'url');
      }
      const sources = await strict.request({ method: 'GET', url: `/v1/knowledge-base/${kb.id}/sources`, ...as(user) });
      assert.deepEqual(sources.json().data, []);
    });

    it('refresh re-chunks a text source; deleting a source removes it from query results at once', async () => {
      const user = await signUp(t);
      const kb = await createBase(t, user);
      const keep = await addText(t, user, kb.id, 'Garden', 'Tomatoes need six hours of sunlight a day.');
      const drop = await addText(t, user, kb.id, 'Orchard', 'Apple trees need a cold winter and some sunlight.');
      const chunksBefore = (await t.request({ method: 'GET', url: `/v1/knowledge-base/${kb.id}/sources/${drop.id}/chunks`, ...as(user) })).json().data;
      const refreshed = await t.request({ method: 'POST', url: `/v1/knowledge-base/${kb.id}/sources/${drop.id}/refresh`, ...as(user) });
      assert.equal(refreshed.statusCode, 200, refreshed.body);
      assert.equal(refreshed.json().status, 'ready');
      const chunksAfter = (await t.request({ method: 'GET', url: `/v1/knowledge-base/${kb.id}/sources/${drop.id}/chunks`, ...as(user) })).json().data;
      assert.deepEqual(chunksAfter.map((c: { text: string }) => c.text), chunksBefore.map((c: { text: string }) => c.text));
      assert.notEqual(chunksAfter[0].id, chunksBefore[0].id);

      assert.deepEqual((await query(t, user, kb.id, 'sunlight')).map((r) => r.source_id).sort(), [keep.id, drop.id].sort());
      const deleted = await t.request({ method: 'DELETE', url: `/v1/knowledge-base/${kb.id}/sources/${drop.id}`, ...as(user) });
      assert.equal(deleted.statusCode, 204);
      assert.deepEqual((await query(t, user, kb.id, 'sunlight')).map((r) => r.source_id), [keep.id]);
      assert.equal((await t.request({ method: 'GET', url: `/v1/knowledge-base/${kb.id}/sources/${drop.id}`, ...as(user) })).statusCode, 404);
      assert.equal((await t.request({ method: 'GET', url: `/v1/knowledge-base/${kb.id}/sources/${drop.id}/chunks`, ...as(user) })).statusCode, 404);
      assert.equal((await t.request({ method: 'DELETE', url: `/v1/knowledge-base/${kb.id}/sources/${drop.id}`, ...as(user) })).statusCode, 404);
      const base = (await t.request({ method: 'GET', url: `/v1/knowledge-base/${kb.id}`, ...as(user) })).json();
      assert.equal(base.source_count, 1);
      assert.equal(base.chunk_count, 1);
    });

    it('refresh is 409 while the source is being processed', async () => {
      const user = await signUp(t);
      const kb = await createBase(t, user);
      const source = await addText(t, user, kb.id, 'Notes', 'Some notes about owls.');
      await t.platform.db.updateTable('knowledge_sources').set({ status: 'processing', updated_at: new Date() }).where('id', '=', source.id).execute();
      const res = await t.request({ method: 'POST', url: `/v1/knowledge-base/${kb.id}/sources/${source.id}/refresh`, ...as(user) });
      assert.equal(res.statusCode, 409);
      assert.equal(res.json().code, 'invalid_state');
      assert.equal((await t.request({ method: 'GET', url: `/v1/knowledge-base/${kb.id}`, ...as(user) })).json().status, 'processing');
    });
  });

  describe('query', () => {
    it('validates the body and ranks by any of the query terms', async () => {
      const user = await signUp(t);
      const kb = await createBase(t, user);
      await addText(t, user, kb.id, 'Bikes', 'Bicycles can be rented at the harbour kiosk.');
      await addText(t, user, kb.id, 'Boats', 'Kayaks are rented at the harbour kiosk, bicycles are rented near the station.');
      const bad = await t.request({ method: 'POST', url: `/v1/knowledge-base/${kb.id}/query`, ...as(user), payload: { query: '', top_k: 21 } });
      assert.equal(bad.statusCode, 422);
      assert.deepEqual(bad.json().errors.map((e: { path: string }) => e.path).sort(), ['query', 'top_k']);
      // No chunk holds every word; each holds some.
      const results = await query(t, user, kb.id, 'where do I rent a kayak or a bicycle near the station?');
      assert.equal(results.length, 2);
      assert.match(results[0].text, /Kayaks/);
      assert.ok(results[0].score >= results[1].score);
      assert.equal((await query(t, user, kb.id, 'kiosk', 1)).length, 1);
    });

    it('the exported search is scoped to the workspace', async () => {
      const owner = await signUp(t);
      const stranger = await signUp(t);
      const kb = await createBase(t, owner);
      await addText(t, owner, kb.id, 'Secret', 'The vault code is kept by the night manager.');
      const search = createKnowledgeSearch({ db: t.platform.db });
      assert.equal((await search.search(owner.workspaceId, [kb.id], 'vault code', 5)).length, 1);
      assert.deepEqual(await search.search(stranger.workspaceId, [kb.id], 'vault code', 5), []);
      assert.deepEqual(await search.search(owner.workspaceId, [], 'vault code', 5), []);
      assert.deepEqual(await missingKnowledgeBaseIds(t.platform.db, owner.workspaceId, [kb.id, 'kb_nope']), ['kb_nope']);
      assert.deepEqual(await missingKnowledgeBaseIds(t.platform.db, stranger.workspaceId, [kb.id]), [kb.id]);
    });
  });

  describe('with an embeddings provider', () => {
    it('stores a vector per chunk, blends cosine similarity into the score, and falls back to full text when the provider fails', async (ctx) => {
      const server = await startFakeEmbeddingsServer();
      ctx.after(() => server.close());
      const app = await buildTestApp({ env: { EMBEDDINGS_BASE_URL: server.baseUrl, EMBEDDINGS_API_KEY: 'sk-test', EMBEDDINGS_MODEL: 'fake-embed-1' }, t: ctx });
      const user = await signUp(app);
      const kb = await createBase(app, user);
      const source = await addText(app, user, kb.id, 'Lighthouse', LONG_TEXT);
      assert.equal(server.requests[0].authorization, 'Bearer sk-test');
      assert.equal(server.requests[0].model, 'fake-embed-1');
      const rows = await app.platform.db.selectFrom('knowledge_chunks').select(['embedding', 'embedding_model']).where('source_id', '=', source.id).execute();
      assert.equal(rows.length, source.chunk_count);
      for (const row of rows) {
        assert.equal(row.embedding_model, 'fake-embed-1');
        assert.equal(row.embedding?.length, 256);
      }
      const hybrid = await query(app, user, kb.id, 'When can tourists climb the tower?');
      assert.match(hybrid[0].text, /climb the tower only on Sundays/);
      assert.ok(hybrid[0].score > 0 && hybrid[0].score <= 1);

      // A base too large for the vector cache: cosine over the full-text candidates only.
      const uncached = createKnowledgeSearch({ db: app.platform.db, embeddings: createOpenAiEmbeddings({ baseUrl: server.baseUrl, model: 'fake-embed-1' }), vectorCacheBytes: 64 });
      const small = await uncached.search(user.workspaceId, [kb.id], 'When can tourists climb the tower?', 3);
      assert.match(small[0].text, /climb the tower only on Sundays/);
      assert.equal(small[0].score, hybrid[0].score);

      // Provider down while querying: full-text ranking still answers.
      server.failNext(10);
      const fallback = await query(app, user, kb.id, 'When can tourists climb the tower?');
      assert.match(fallback[0].text, /climb the tower only on Sundays/);
      // Provider down while ingesting: the source is indexed for full text, without vectors.
      server.failNext(10);
      const plain = await addText(app, user, kb.id, 'Bees', 'The beekeeper harvests honey in August.');
      const stored = await app.platform.db.selectFrom('knowledge_chunks').select('embedding').where('source_id', '=', plain.id).execute();
      assert.deepEqual(stored.map((r) => r.embedding), [null]);
      assert.match((await query(app, user, kb.id, 'honey harvest'))[0].text, /beekeeper/);
      // Deleting a source drops it from hybrid results too.
      await app.request({ method: 'DELETE', url: `/v1/knowledge-base/${kb.id}/sources/${source.id}`, ...as(user) });
      assert.ok((await query(app, user, kb.id, 'When can tourists climb the tower?')).every((r) => r.source_id !== source.id));
    });
  });

  securitySuite('knowledge base', async () => t, {
    'POST /v1/knowledge-base': { scope: 'write', prepare: async () => ({ method: 'POST', url: '/v1/knowledge-base', payload: { name: 'x' } }) },
    'GET /v1/knowledge-base': { scope: 'read-only', prepare: async () => ({ method: 'GET', url: '/v1/knowledge-base' }) },
    'GET /v1/knowledge-base/{id}': { scope: 'read-only', ownedResource: true, prepare: async (app, owner) => ({ method: 'GET', url: `/v1/knowledge-base/${(await createBase(app, owner)).id}` }) },
    'PATCH /v1/knowledge-base/{id}': { scope: 'write', ownedResource: true, prepare: async (app, owner) => ({ method: 'PATCH', url: `/v1/knowledge-base/${(await createBase(app, owner)).id}`, payload: { name: 'y' } }) },
    'DELETE /v1/knowledge-base/{id}': { scope: 'write', ownedResource: true, prepare: async (app, owner) => ({ method: 'DELETE', url: `/v1/knowledge-base/${(await createBase(app, owner)).id}` }) },
    'POST /v1/knowledge-base/{id}/sources': {
      scope: 'write',
      ownedResource: true,
      prepare: async (app, owner) => ({ method: 'POST', url: `/v1/knowledge-base/${(await createBase(app, owner)).id}/sources`, payload: { type: 'text', title: 'a', text: 'b' } }),
    },
    'GET /v1/knowledge-base/{id}/sources': { scope: 'read-only', ownedResource: true, prepare: async (app, owner) => ({ method: 'GET', url: `/v1/knowledge-base/${(await createBase(app, owner)).id}/sources` }) },
    'GET /v1/knowledge-base/{id}/sources/{src}': { scope: 'read-only', ownedResource: true, prepare: async (app, owner) => ({ method: 'GET', url: await sourceUrl(app, owner) }) },
    'DELETE /v1/knowledge-base/{id}/sources/{src}': { scope: 'write', ownedResource: true, prepare: async (app, owner) => ({ method: 'DELETE', url: await sourceUrl(app, owner) }) },
    'POST /v1/knowledge-base/{id}/sources/{src}/refresh': { scope: 'write', ownedResource: true, prepare: async (app, owner) => ({ method: 'POST', url: `${await sourceUrl(app, owner)}/refresh` }) },
    'GET /v1/knowledge-base/{id}/sources/{src}/chunks': { scope: 'read-only', ownedResource: true, prepare: async (app, owner) => ({ method: 'GET', url: `${await sourceUrl(app, owner)}/chunks` }) },
    'POST /v1/knowledge-base/{id}/query': {
      scope: 'write',
      ownedResource: true,
      prepare: async (app, owner) => ({ method: 'POST', url: `/v1/knowledge-base/${(await createBase(app, owner)).id}/query`, payload: { query: 'hello' } }),
    },
  });
});

async function sourceUrl(app: TestApp, owner: TestUser) {
  const kb = await createBase(app, owner);
  const source = await addText(app, owner, kb.id, 'Doc', 'Some words to index.');
  return `/v1/knowledge-base/${kb.id}/sources/${source.id}`;
}

