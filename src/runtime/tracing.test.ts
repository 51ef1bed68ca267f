import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { recordingSpan, type RecordedSpan } from './test-helpers.ts';
import { NO_TRACE, stage, traceActions, turnTrace } from './tracing.ts';

// The runtime's tracing port on a span that records what it is told: each stage's times and
// duration, the first-* stages once per turn, the first frame timed from the first audio, a turn
// ended once, and the tools' spans with their status (test/tracing.test.ts runs it over OpenTelemetry).

/** A child as [name, start, attributes, ends, failed]. */
const shape = (r: RecordedSpan) => [r.name, r.start, r.attributes, r.ends, r.failed];

describe('NO_TRACE', () => {
  it('without tracing every span is NO_TRACE and does nothing', () => {
    assert.equal(NO_TRACE.child('turn', 0, { 'turn.index': 0 }), NO_TRACE);
    NO_TRACE.set({ a: 1 });
    NO_TRACE.fail('stt_failed');
    NO_TRACE.end(10);
    assert.deepEqual(Object.keys(NO_TRACE).sort(), ['child', 'end', 'fail', 'set']);
  });
});

describe('stage', () => {
  it('is a child from its start with its rounded duration, ended at its end; never negative', () => {
    const { span, record } = recordingSpan();
    stage(span, 'stt', 100, 350.6, { 'stt.model': 'whisper' });
    stage(span, 'llm.first_token', 500, 480);
    assert.deepEqual(record.children.map(shape), [
      ['stt', 100, { 'stt.model': 'whisper', duration_ms: 251 }, [350.6], []],
      ['llm.first_token', 500, { duration_ms: 0 }, [480], []],
    ]);
  });
});

describe('turnTrace', () => {
  it('a turn span with its index and kind; each first-* stage once; the first frame from the first audio', () => {
    const { span, record } = recordingSpan();
    const turn = turnTrace(span, 3, 1000, 'caller');
    turn.stage('vad.end_of_turn', 900, 1000, { 'vad.frames': 12 });
    turn.first('llm.first_token', 1000, 1200);
    turn.first('llm.first_token', 1000, 1300);
    turn.first('tts.first_audio', 1200, 1450);
    turn.first('tts.first_audio', 1200, 1500);
    turn.firstFrame(1460);
    turn.firstFrame(1480);
    turn.fail('tts_failed');
    turn.end(2000, { 'turn.interrupted': true });
    turn.end(2500, { 'turn.interrupted': false });
    assert.equal(record.children.length, 1);
    const [t] = record.children;
    assert.deepEqual(shape(t), ['turn', 1000, { 'turn.index': 3, 'turn.kind': 'caller', 'turn.interrupted': true }, [2000], ['tts_failed']]);
    assert.deepEqual(t.children.map(shape), [
      ['vad.end_of_turn', 900, { 'vad.frames': 12, duration_ms: 100 }, [1000], []],
      ['llm.first_token', 1000, { duration_ms: 200 }, [1200], []],
      ['tts.first_audio', 1200, { duration_ms: 250 }, [1450], []],
      ['first_frame_out', 1450, { duration_ms: 10 }, [1460], []],
    ]);
  });

  it('a first frame with no audio before it is a stage of no time; an end without attributes sets none', () => {
    const { span, record } = recordingSpan();
    const turn = turnTrace(span, 0, 0, 'agent');
    turn.first('llm.first_token', 0, 30);
    turn.firstFrame(40);
    turn.end(60);
    assert.deepEqual(record.children.map(shape), [['turn', 0, { 'turn.index': 0, 'turn.kind': 'agent' }, [60], []]]);
    assert.deepEqual(record.children[0].children.map(shape), [
      ['llm.first_token', 0, { duration_ms: 30 }, [30], []],
      ['first_frame_out', 40, { duration_ms: 0 }, [40], []],
    ]);
  });
});

describe('traceActions', () => {
  it("a tool span per function in the reply's window: its status, its own duration, failed from 400 or without an answer", () => {
    const { span, record } = recordingSpan();
    const turn = turnTrace(span, 1, 0, 'caller');
    traceActions(
      turn,
      [
        { type: 'function_call', name: 'book', arguments: { day: 'friday' }, result: { status: 200, body: { ok: true }, duration_ms: 42 } },
        { type: 'function_call', name: 'check', arguments: {}, result: { status: 399, body: null, duration_ms: 7 } },
        { type: 'function_call', name: 'pay', arguments: {}, result: { status: 400, body: null, duration_ms: 9 } },
        { type: 'function_call', name: 'lost', arguments: {}, result: { error: 'timeout' } },
        { type: 'search_knowledge_base', query: 'opening hours', results: 3 },
        { type: 'end_call', reason: 'caller_goodbye' },
      ],
      100,
      350.4,
    );
    assert.deepEqual(record.children[0].children.map(shape), [
      ['tool', 100, { duration_ms: 250, 'tool.name': 'book', 'tool.status': '200', 'tool.duration_ms': 42 }, [350.4], []],
      ['tool', 100, { duration_ms: 250, 'tool.name': 'check', 'tool.status': '399', 'tool.duration_ms': 7 }, [350.4], []],
      ['tool', 100, { duration_ms: 250, 'tool.name': 'pay', 'tool.status': '400', 'tool.duration_ms': 9 }, [350.4], ['tool_failed']],
      ['tool', 100, { duration_ms: 250, 'tool.name': 'lost', 'tool.status': 'error' }, [350.4], ['tool_failed']],
      ['tool', 100, { 'tool.name': 'search_knowledge_base', 'tool.results': 3, duration_ms: 250 }, [350.4], []],
    ]);
  });

  it('a window that ends before it starts is 0 ms', () => {
    const { span, record } = recordingSpan();
    traceActions(turnTrace(span, 1, 0, 'typed'), [{ type: 'function_call', name: 'book', arguments: {}, result: { status: 204, body: null, duration_ms: 1 } }], 300, 200);
    assert.equal(record.children[0].children[0].attributes.duration_ms, 0);
  });
});
