import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chunkText, normalizeText } from './chunking.ts';
import { formatOfFile, formatOfResponse, markdownToPlainText } from './extract.ts';
import { tsConfigFor } from './language.ts';

describe('chunking', () => {
  it('keeps short text whole and normalises whitespace', () => {
    assert.deepEqual(chunkText('  Hello   world.\r\n\r\n\r\nSecond\tparagraph. '), ['Hello world.\n\nSecond paragraph.']);
    assert.deepEqual(chunkText(' \n\n '), []);
    assert.equal(normalizeText('\uFEFFa\u00a0b'), 'a b');
  });

  it('cuts on paragraph, then sentence, then word boundaries, within the target, with overlap', () => {
    const sentence = (i: number) => `Sentence number ${i} talks about topic ${i} in some detail.`;
    const paragraphs = Array.from({ length: 10 }, (_, p) => Array.from({ length: 6 }, (_, s) => sentence(p * 6 + s)).join(' '));
    const chunks = chunkText(paragraphs.join('\n\n'));
    assert.ok(chunks.length > 4);
    for (const chunk of chunks) {
      assert.ok(chunk.length <= 800, `${chunk.length}`);
      assert.match(chunk, /^Sentence number \d+/, 'starts at a sentence');
      assert.match(chunk, /detail\.$/, 'ends at a sentence');
    }
    for (let i = 1; i < chunks.length; i++) {
      const first = /^Sentence number (\d+)/.exec(chunks[i])![1];
      assert.ok(chunks[i - 1].includes(sentence(Number(first))), `chunk ${i} starts with text of chunk ${i - 1}`);
    }
    // Every sentence survives.
    for (let i = 0; i < 60; i++) assert.ok(chunks.some((c) => c.includes(sentence(i))), `sentence ${i}`);
    const word = 'x'.repeat(2000);
    assert.deepEqual(chunkText(word).map((c) => c.length), [800, 800, 400]);
  });

  it('keeps a heading with the paragraph after it', () => {
    const text = `${'Intro sentence here. '.repeat(37).trim()}\n\nBilling\n\nInvoices are sent monthly.`;
    const chunks = chunkText(text);
    assert.equal(chunks.length, 2);
    assert.match(chunks[1], /Billing\n\nInvoices are sent monthly\.$/);
    assert.doesNotMatch(chunks[0], /Billing/);
  });
});

describe('document formats', () => {
  it('detects formats by extension, then media type', () => {
    assert.equal(formatOfFile('Guide.MD', 'application/octet-stream'), 'md');
    assert.equal(formatOfFile('upload', 'application/pdf'), 'pdf');
    assert.equal(formatOfFile('a.exe', 'application/x-msdownload'), undefined);
    assert.equal(formatOfResponse('text/html; charset=utf-8', 'https://x.test/a.pdf'), 'html');
    assert.equal(formatOfResponse('application/octet-stream', 'https://x.test/a.docx'), 'docx');
    assert.equal(formatOfResponse('image/png', 'https://x.test/a.txt'), undefined);
  });

  it('strips Markdown syntax but keeps the words', () => {
    assert.equal(markdownToPlainText('## Title\n\nSee [the docs](https://x.test) and **bold** `code`.\n\n* item'), 'Title\n\nSee the docs and bold code.\n\n- item');
  });

  it('maps languages to text search configurations', () => {
    assert.equal(tsConfigFor('en'), 'english');
    assert.equal(tsConfigFor('FR'), 'french');
    assert.equal(tsConfigFor('ja'), 'simple');
  });
});
