import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EXTRACTION_CASES, FIXTURE_NOW } from '../../engine/fixtures/extraction-cases.ts';
import { contextFor, extractFields, findBoolean, findEnum, findPhone } from './extract.ts';
import { findDate } from './extract-dates.ts';
import { wordsToDigits } from '../../platform/text.ts';

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

  // Written by a reviewer after the fixture above and never tuned against: a check that the
  // extractor generalises. First run: 12/14 (the two callback_number cases missed, read as an
  // id because neither the name nor the description said "phone"); kindOf now reads a number
  // you are called back or reached on as a phone number.
  it('extracts a held-out set of utterances it was not tuned on', (t) => {
    const ctx = contextFor('en-US', FIXTURE_NOW);
    const callback = { name: 'callback_number', type: 'string', description: 'Number to call the caller back on' } as const;
    const email = { name: 'email', type: 'string', description: "The caller's email address" } as const;
    const cases: Array<{ field: Parameters<typeof extractFields>[0][number]; question?: string; utterance: string; expected: unknown }> = [
      { field: email, utterance: 'Send it to maria.gonzalez+orders@fastmail.fm please', expected: 'maria.gonzalez+orders@fastmail.fm' },
      { field: email, question: 'And your email?', utterance: "it's kevin at kevinbuilds dot net", expected: 'kevin@kevinbuilds.net' },
      { field: callback, utterance: 'Call me back on (212) 555-0199', expected: '+12125550199' },
      { field: callback, question: 'What number can we reach you at?', utterance: 'five five five, one two three, four five six seven', expected: '+15551234567' },
      { field: { name: 'visit_date', type: 'string', description: 'The date the caller wants to come in' }, utterance: 'Could we do December 3rd?', expected: '2026-12-03' },
      { field: { name: 'visit_date', type: 'string', description: 'The date the caller wants to come in' }, utterance: 'tomorrow afternoon works', expected: '2026-11-24' },
      { field: { name: 'guests', type: 'number', description: 'How many guests are coming' }, question: 'How many guests?', utterance: "we'll be six of us", expected: 6 },
      { field: { name: 'budget', type: 'number', description: 'Budget in USD' }, utterance: 'We have roughly 12,500 dollars set aside', expected: 12500 },
      { field: { name: 'wants_newsletter', type: 'boolean', description: 'Whether the caller wants the newsletter' }, question: 'Would you like to receive our newsletter?', utterance: "Nah, I'm good", expected: false },
      { field: { name: 'first_visit', type: 'boolean', description: 'Whether this is the first visit' }, question: 'Is this your first visit with us?', utterance: 'Yep, first time', expected: true },
      { field: { name: 'department', type: 'enum', description: 'Which team should handle the request', enum: ['billing', 'technical', 'sales'] }, utterance: 'I have a question about a charge on my invoice', expected: 'billing' },
      { field: { name: 'urgency', type: 'enum', description: 'How urgent the issue is', enum: ['low', 'medium', 'high'] }, question: 'How urgent is it?', utterance: 'pretty high, the whole office is offline', expected: 'high' },
      { field: { name: 'full_name', type: 'string', description: "The caller's full name" }, question: 'May I have your name?', utterance: 'Sure, this is Priya Patel', expected: 'Priya Patel' },
      { field: email, utterance: "I don't have an email address", expected: null },
    ];
    const wrong: string[] = [];
    for (const c of cases) {
      const transcript = [...(c.question ? [{ role: 'agent' as const, text: c.question }] : []), { role: 'user' as const, text: c.utterance }];
      const got = extractFields([c.field], transcript, ctx)[c.field.name];
      if (got !== c.expected) wrong.push(`${c.field.name} <- "${c.utterance}": expected ${JSON.stringify(c.expected)}, got ${JSON.stringify(got)}`);
    }
    t.diagnostic(`held-out extraction accuracy ${cases.length - wrong.length}/${cases.length}`);
    assert.deepEqual(wrong, []);
  });

  it('reads a callback number as a phone number even when no word says phone', () => {
    const ctx = contextFor('en-US', FIXTURE_NOW);
    const field = { name: 'callback_number', type: 'string', description: 'Number to call the caller back on' } as const;
    assert.deepEqual(extractFields([field], [{ role: 'user', text: 'Call me back on (212) 555-0199' }], ctx), { callback_number: '+12125550199' });
    // A number that is not for calling stays an id.
    const ticket = { name: 'ticket_number', type: 'string', description: 'The ticket the caller mentions' } as const;
    assert.deepEqual(extractFields([ticket], [{ role: 'user', text: 'My ticket is 48213' }], ctx), { ticket_number: '48213' });
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
