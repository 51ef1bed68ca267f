import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NOTHING_HEARD, newAgentTurn } from './agent-turn.ts';
import { latencySummary, type TranscriptEntry } from './outcome.ts';
import { createSentenceStream, playedWords, splitSentences } from './sentence-stream.ts';
import { turnTrace, NO_TRACE } from './tracing.ts';

// The speech rules on exact text and numbers: where a streamed reply is cut into sentences, the
// words of a reply heard up to a barge-in, a call's latency percentiles, a new agent turn.

describe('sentences', () => {
  it('cuts at . ! ? … (runs of them, a closing quote or bracket) followed by space, as the fragments come', () => {
    const out: string[] = [];
    const stream = createSentenceStream((sentence) => out.push(sentence));
    for (const fragment of ['Hello there', '! Is it 3.5 ', 'euros?! "Yes." (Sure', '.) Wait… ok ', ' then', '...', '\n', 'Bye']) stream.push(fragment);
    assert.deepEqual(out, ['Hello there!', 'Is it 3.5 euros?!', '"Yes."', '(Sure.)', 'Wait…', 'ok  then...']);
    stream.flush();
    assert.deepEqual(out.at(-1), 'Bye');
    stream.flush();
    assert.equal(out.length, 7, 'a second flush has nothing left');
  });

  it('keeps a sentence whole until its boundary: no space after the mark yet, a decimal point, a mark without space', () => {
    const out: string[] = [];
    const stream = createSentenceStream((sentence) => out.push(sentence));
    stream.push('It costs 4.50 today.');
    assert.deepEqual(out, [], 'no space after the last mark yet');
    stream.push('Thanks.');
    assert.deepEqual(out, [], 'a mark followed by a letter is no boundary');
    stream.push('\tNext');
    assert.deepEqual(out, ['It costs 4.50 today.Thanks.'], 'a space after a sentence mark is');
    stream.push('.  ');
    assert.deepEqual(out, ['It costs 4.50 today.Thanks.', 'Next.']);
    stream.push('   ');
    stream.flush();
    assert.equal(out.length, 2, 'blank rests are not sentences');
  });

  it('splits a whole text, the rest included', () => {
    assert.deepEqual(splitSentences('One. Two!  Three'), ['One.', 'Two!', 'Three']);
    assert.deepEqual(splitSentences('   '), []);
  });

  it('the words heard when part of a reply played, cut at a word boundary', () => {
    const text = 'one two  three\tfour five';
    assert.equal(playedWords(text, 10, 10), text, 'all played');
    assert.equal(playedWords(text, 12, 10), text, 'more than all');
    assert.equal(playedWords(text, 3, 0), text, 'no frame count: the text');
    assert.equal(playedWords(text, 3, -1), text);
    assert.equal(playedWords(text, 0, 10), '');
    assert.equal(playedWords(text, -2, 10), '');
    assert.equal(playedWords(text, 5, 10), 'one two', 'half of five words, rounded down');
    assert.equal(playedWords(text, 9, 10), 'one two three four');
    assert.equal(playedWords(' lead trail ', 1, 2), 'lead', 'no empty word from the edges');
  });
});

describe('latencySummary', () => {
  const agent = (latency_ms?: number): TranscriptEntry => ({ role: 'agent', text: 'a', start_ms: 0, end_ms: 1, ...(latency_ms === undefined ? {} : { latency_ms }) });
  const user: TranscriptEntry = { role: 'user', text: 'u', start_ms: 0, end_ms: 1, latency_ms: 1 };

  it('nearest-rank p50 and p95 of the answering agent turns, sorted by value', () => {
    const twenty = Array.from({ length: 20 }, (_, i) => agent(((i * 7) % 20) * 100 + 100));
    assert.deepEqual(latencySummary([user, agent(), ...twenty]), { turns: 20, p50_ms: 1000, p95_ms: 1900 });
    assert.deepEqual(latencySummary([agent(900), agent(300), agent(600)]), { turns: 3, p50_ms: 600, p95_ms: 900 });
    assert.deepEqual(latencySummary([agent(50), agent(1000)]), { turns: 2, p50_ms: 50, p95_ms: 1000 });
    assert.deepEqual(latencySummary([agent(420)]), { turns: 1, p50_ms: 420, p95_ms: 420 });
  });

  it('no answering turn: no figures', () => {
    assert.deepEqual(latencySummary([user, agent()]), { turns: 0, p50_ms: null, p95_ms: null });
  });
});

describe('newAgentTurn', () => {
  it("a turn answering the caller starts its timings from what was heard; a greeting has none; each its own controller and lists", () => {
    const trace = turnTrace(NO_TRACE, 0, 0, 'agent');
    const answer = newAgentTurn(1200, { stt_ms: 80, stt_wait_ms: 10 }, trace);
    assert.deepEqual(answer.timings, { stt_ms: 80, stt_wait_ms: 10, llm_first_token_ms: 0, tts_first_audio_ms: 0 });
    assert.deepEqual([answer.turnEndAt, answer.firstFrameAt, answer.after, answer.generated, answer.synthesizing], [1200, null, null, false, false]);
    assert.deepEqual([answer.sentences, answer.pending], [[], []]);
    const greeting = newAgentTurn(null, NOTHING_HEARD, trace);
    assert.equal(greeting.timings, null);
    assert.deepEqual(NOTHING_HEARD, { stt_ms: 0, stt_wait_ms: 0 });
    assert.notEqual(greeting.controller, answer.controller);
    assert.equal(greeting.controller.signal.aborted, false);
  });
});
