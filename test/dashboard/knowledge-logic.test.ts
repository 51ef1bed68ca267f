import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type AddFailure, importNumbers, importPreview, importSummary, MAX_IMPORT, retryAfterMs } from '../../web/dashboard/src/pages/dnc-import.ts';
import { anyProcessing, fileProblem, formatBytes, originOf, scoreOf, sourceTally, textSourceProblems, topKOf, urlProblem } from '../../web/dashboard/src/pages/knowledge-base-view.ts';
import { e164Problem, parseNumberList, toE164 } from '../../web/dashboard/src/pages/phone-number-input.ts';
import { numberSearchOf } from '../../web/dashboard/src/pages/phone-number-search.ts';

// The pure logic of the knowledge-base, phone-number and do-not-call pages: what they check
// before sending, how they show sizes and scores, the list import.

describe('E.164 input', () => {
  it('normalises the usual punctuation and a 00 prefix', () => {
    assert.equal(toE164('+1 (555) 010-0222'), '+15550100222');
    assert.equal(toE164(' +44 20.7946.0018 '), '+442079460018');
    assert.equal(toE164('0033 1 23 45 67 89'), '+33123456789');
    assert.equal(toE164('+15550100222'), '+15550100222');
  });

  it('refuses what cannot be a number, saying why', () => {
    for (const raw of ['5550100222', '+0123456789', '+12345', '+1234567890123456', '+1 555 CALL NOW', '']) assert.equal(toE164(raw), undefined, raw);
    assert.equal(e164Problem(''), 'Enter a phone number.');
    assert.match(String(e164Problem('555 010 0222')), /Start with \+/);
    assert.match(String(e164Problem('+1 555 CALL')), /digits only/i);
    assert.match(String(e164Problem('+12')), /7 to 15 digits/);
    assert.equal(e164Problem('+1 555 010 0222'), undefined);
  });
});

describe('parseNumberList', () => {
  it('reads one number a line with an optional reason, skipping a header, blanks and repeats', () => {
    const list = parseNumberList('number,reason\n+15550100222,asked twice\n\n"+1 555 010 0223";"called, not interested"\n+15550100222,again\nnot a number\r\n+44 20 7946 0018\t');
    assert.deepEqual(list.entries, [{ number: '+15550100222', reason: 'asked twice' }, { number: '+15550100223', reason: 'called, not interested' }, { number: '+442079460018' }]);
    assert.deepEqual(list.invalid, [{ line: 6, text: 'not a number' }]);
    assert.equal(list.repeated, 1);
  });

  it('says what a list holds before it is sent', () => {
    assert.equal(importPreview(parseNumberList('+15550100222\n+15550100222\nnope\nnope')), '1 number to import, 1 repeated, 2 lines without a phone number.');
    assert.equal(importPreview(parseNumberList('+15550100222\n+15550100223')), '2 numbers to import.');
  });

  it('keeps a first line that holds a number', () => {
    assert.deepEqual(parseNumberList('+15550100222\n+15550100223').entries.map((e) => e.number), ['+15550100222', '+15550100223']);
    assert.deepEqual(parseNumberList('').entries, []);
  });
});

describe('importNumbers', () => {
  const entries = ['+15550100001', '+15550100002', '+15550100003'].map((number) => ({ number }));
  const classify = (error: unknown): AddFailure => (error === 'rate' ? { retryAfterMs: 2000 } : { message: String(error) });

  it('adds each number in order, notes refusals and goes on', async () => {
    const sent: string[] = [];
    const progress: string[] = [];
    const outcome = await importNumbers(entries, {
      add: async (entry) => {
        sent.push(entry.number);
        if (entry.number.endsWith('2')) throw 'refused';
      },
      failureOf: classify,
      sleep: async () => undefined,
      onProgress: (done, total) => progress.push(`${done}/${total}`),
    });
    assert.deepEqual(sent, ['+15550100001', '+15550100002', '+15550100003']);
    assert.deepEqual(outcome, { listed: 2, refused: [{ number: '+15550100002', message: 'refused' }], stopped: false });
    assert.deepEqual(progress, ['1/3', '2/3', '3/3']);
  });

  it('waits out a rate limit and sends the same number again', async () => {
    const sent: string[] = [];
    const slept: number[] = [];
    let limited = false;
    const outcome = await importNumbers(entries, {
      add: async (entry) => {
        sent.push(entry.number);
        if (entry.number.endsWith('2') && !limited) {
          limited = true;
          throw 'rate';
        }
      },
      failureOf: classify,
      sleep: async (ms) => {
        slept.push(ms);
      },
    });
    assert.deepEqual(sent, ['+15550100001', '+15550100002', '+15550100002', '+15550100003']);
    assert.deepEqual(slept, [2000]);
    assert.equal(outcome.listed, 3);
  });

  it('stops between two numbers when asked, and sends at most MAX_IMPORT', async () => {
    let count = 0;
    const stopped = await importNumbers(entries, { add: async () => void count++, failureOf: classify, sleep: async () => undefined, stopped: () => count >= 1 });
    assert.deepEqual(stopped, { listed: 1, refused: [], stopped: true });
    let sent = 0;
    const many = Array.from({ length: MAX_IMPORT + 5 }, (_, i) => ({ number: `+1555${String(i).padStart(7, '0')}` }));
    await importNumbers(many, { add: async () => void sent++, failureOf: classify, sleep: async () => undefined });
    assert.equal(sent, MAX_IMPORT);
  });

  it('reads Retry-After and sums the outcome up in words', () => {
    assert.equal(retryAfterMs('3'), 3000);
    assert.equal(retryAfterMs(null), 5000);
    assert.equal(retryAfterMs('soon'), 5000);
    assert.equal(retryAfterMs('3600'), 60_000);
    assert.equal(importSummary({ listed: 1, refused: [], stopped: false }, 0), 'Import done: 1 number on the list.');
    assert.equal(importSummary({ listed: 2, refused: [{ number: '+1', message: 'x' }], stopped: true }, 2), 'Import stopped: 2 numbers on the list, 1 refused, 2 lines without a phone number skipped.');
  });
});

describe('knowledge-base checks and display', () => {
  it('accepts the formats the platform reads, within 20 MB', () => {
    assert.equal(fileProblem({ name: 'faq.md', size: 10, type: '' }), undefined);
    assert.equal(fileProblem({ name: 'FAQ.PDF', size: 10, type: 'application/pdf' }), undefined);
    assert.equal(fileProblem({ name: 'notes', size: 10, type: 'text/plain' }), undefined);
    assert.match(String(fileProblem({ name: 'photo.png', size: 10, type: 'image/png' })), /cannot be read/);
    assert.equal(fileProblem({ name: 'empty.txt', size: 0, type: 'text/plain' }), 'This file is empty.');
    assert.match(String(fileProblem({ name: 'big.pdf', size: 21 * 1024 * 1024, type: '' })), /21 MB: the limit is 20 MB/);
    assert.equal(fileProblem(undefined), 'Choose a file.');
  });

  it('checks a text source, a web address and the number of results', () => {
    assert.deepEqual(textSourceProblems({ title: ' ', text: '' }), { title: 'Give the text a title.', text: 'Paste or type the text.' });
    assert.deepEqual(textSourceProblems({ title: 'Hours', text: 'Open 9 to 5' }), {});
    assert.equal(textSourceProblems({ title: 'x'.repeat(301), text: 'y' }).title, 'At most 300 characters.');
    assert.equal(urlProblem('https://example.com/faq'), undefined);
    assert.match(String(urlProblem('example.com')), /starting with https/);
    assert.match(String(urlProblem('ftp://example.com/a')), /Only http/);
    assert.equal(urlProblem(''), 'Enter the address of a web page.');
    assert.equal(topKOf('5'), 5);
    assert.equal(topKOf(' 20 '), 20);
    for (const raw of ['0', '21', '2.5', '', 'five']) assert.equal(topKOf(raw), undefined, raw);
  });

  it('reads sizes and scores, knows when to poll, names the origin', () => {
    assert.equal(formatBytes(0), '0 B');
    assert.equal(formatBytes(1023), '1023 B');
    assert.equal(formatBytes(1536), '1.5 KB');
    assert.equal(formatBytes(1024), '1 KB');
    assert.equal(formatBytes(15 * 1024 * 1024), '15 MB');
    assert.deepEqual(scoreOf(0.8349), { text: '0.83', percent: 83 });
    assert.deepEqual(scoreOf(1.7), { text: '1.00', percent: 100 });
    assert.deepEqual(scoreOf(Number.NaN), { text: '0.00', percent: 0 });
    assert.equal(anyProcessing([{ status: 'ready' }, { status: 'processing' }]), true);
    assert.equal(anyProcessing([{ status: 'ready' }, { status: 'failed' }]), false);
    assert.equal(originOf({ type: 'file', filename: 'faq.md' }), 'faq.md');
    assert.equal(originOf({ type: 'url', url: 'https://example.com' }), 'https://example.com');
    assert.equal(originOf({ type: 'text' }), 'Text');
    assert.equal(sourceTally([{ status: 'ready' }]), '1 source: 1 ready');
    assert.equal(sourceTally([{ status: 'ready' }, { status: 'processing' }, { status: 'failed' }, { status: 'ready' }]), '4 sources: 2 ready, 1 processing, 1 failed');
    assert.equal(sourceTally([]), '0 sources: 0 ready');
  });
});

describe('numberSearchOf', () => {
  it('builds the query from the form, upper-casing the country and dropping punctuation', () => {
    assert.deepEqual(numberSearchOf({ country: 'us', area_code: '555', contains: '01-42' }), { query: { limit: 10, country: 'US', area_code: '555', contains: '0142' }, problems: {} });
    assert.deepEqual(numberSearchOf({ country: 'US', area_code: '', contains: '' }).query, { limit: 10, country: 'US' });
  });

  it('names each field at fault', () => {
    assert.deepEqual(numberSearchOf({ country: 'USA', area_code: '55a', contains: 'abc' }).problems, { country: 'Two letters, e.g. US.', area_code: 'Up to 5 digits, e.g. 555.', contains: 'Digits only, up to 15.' });
  });
});
