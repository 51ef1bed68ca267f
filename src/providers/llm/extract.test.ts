import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EXTRACTION_CASES, FIXTURE_NOW } from '../../engine/fixtures/extraction-cases.ts';
import { contextFor, extractFields, findBoolean, findDate, findEnum, findPhone } from './extract.ts';
import { wordsToDigits } from './text.ts';

describe('built-in extraction', () => {
  it('extracts the committed fixture with at least 95 % accuracy', (t) => {
    const types = new Set(EXTRACTION_CASES.map((c) => c.field.type));
    assert.deepEqual([...types].sort(), ['boolean', 'enum', 'number', 'string']);
    assert.ok(EXTRACTION_CASES.length >= 40);
    const ctx = contextFor('en-US', FIXTURE_NOW);
    const wrong: string[] = [];
    for (const c of EXTRACTION_CASES) {
      const transcript = [
        ...(c.question ? [{ role: 'agent' as const, text: c.question }] : []),
        { role: 'user' as const, text: c.utterance },
      ];
      const got = extractFields([c.field], transcript, ctx)[c.field.name];
      if (got !== c.expected) wrong.push(`${c.field.name} <- "${c.utterance}": expected ${JSON.stringify(c.expected)}, got ${JSON.stringify(got)}`);
    }
    const rate = (EXTRACTION_CASES.length - wrong.length) / EXTRACTION_CASES.length;
    t.diagnostic(`extraction accuracy ${(rate * 100).toFixed(1)} % (${EXTRACTION_CASES.length - wrong.length}/${EXTRACTION_CASES.length})`);
    for (const w of wrong) t.diagnostic(`miss: ${w}`);
    assert.ok(rate >= 0.95, `accuracy ${rate} below 0.95:\n${wrong.join('\n')}`);
  });

  it('turns number words into digits up to the hundreds', () => {
    assert.equal(wordsToDigits('ninety-nine red balloons'), '99 red balloons');
    assert.equal(wordsToDigits('a hundred and five'), '105');
    assert.equal(wordsToDigits('twelve'), '12');
    assert.equal(wordsToDigits('one two three'), '1 2 3');
  });

  it('resolves weekdays to the next such day, never today', () => {
    const ctx = contextFor('en-US', FIXTURE_NOW); // a Monday
    assert.equal(findDate('Monday', ctx), '2026-11-30');
    assert.equal(findDate('Sunday', ctx), '2026-11-29');
    assert.equal(findDate('in two weeks', ctx), '2026-12-07');
  });

  it('reads numeric dates month-first in en-US and day-first elsewhere', () => {
    assert.equal(findDate('3/4', contextFor('en-US', FIXTURE_NOW)), '2027-03-04');
    assert.equal(findDate('3/4', contextFor('en-GB', FIXTURE_NOW)), '2027-04-03');
  });

  it('normalises national phone numbers to E.164 in the region of the agent language', () => {
    assert.equal(findPhone('020 7946 0958', contextFor('en-GB', FIXTURE_NOW).country), '+442079460958');
    assert.equal(findPhone('020 7946 0958', contextFor('en-US', FIXTURE_NOW).country), null);
  });

  it('keeps the first word decisive for yes/no and reads negations', () => {
    assert.equal(findBoolean('no problem at all'), true);
    assert.equal(findBoolean("I'm not interested"), false);
    assert.equal(findBoolean('the weather is nice'), null);
  });

  it('prefers the longest enum match', () => {
    assert.equal(findEnum('very satisfied overall', ['satisfied', 'very_satisfied']), 'very_satisfied');
  });

  it('takes the latest relevant answer so a correction wins, and null for fields never given', () => {
    const ctx = contextFor('en-US', FIXTURE_NOW);
    const out = extractFields(
      [
        { name: 'email', type: 'string', description: 'Email address' },
        { name: 'party_size', type: 'number', description: 'How many people' },
        { name: 'wants_reminder', type: 'boolean', description: 'Whether to send a reminder' },
      ],
      [
        { role: 'agent', text: 'What is your email?' },
        { role: 'user', text: 'a@example.com' },
        { role: 'agent', text: 'Got it.' },
        { role: 'user', text: 'Sorry, I meant b@example.com' },
        { role: 'agent', text: 'How many people?' },
        { role: 'user', text: 'three' },
      ],
      ctx,
    );
    assert.deepEqual(out, { email: 'b@example.com', party_size: 3, wants_reminder: null });
  });
});
