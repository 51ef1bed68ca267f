import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Agent, WebhookDelivery } from '../../sdks/typescript/src/index.ts';
import { draftField, draftOf, updateOf } from '../../web/dashboard/src/pages/agent-draft.ts';
import { callerScriptOf } from '../../web/dashboard/src/pages/agent/caller-script.ts';
import { describeAction } from '../../web/dashboard/src/pages/agent/chat-actions.ts';
import { extractionFieldsOf, newExtractionDraft, valuesOf } from '../../web/dashboard/src/pages/agent/extraction-draft.ts';
import { checkSchema, exampleArguments, functionDraftOf, functionsOf, newFunctionDraft } from '../../web/dashboard/src/pages/agent/function-draft.ts';
import { parseArguments, variablesOf } from '../../web/dashboard/src/pages/agent/json-text.ts';
import { controlsOf, hasEnded, settling } from '../../web/dashboard/src/pages/call/call-status.ts';
import { callIdOfPayload, candidatesFor } from '../../web/dashboard/src/pages/call/delivery-match.ts';
import { transcriptFromEvents } from '../../web/dashboard/src/pages/call/live-transcript.ts';

// The agent editor's and call pages' pure logic: functions and their JSON Schemas, extraction
// fields, the whole PATCH body, the test panel's caller script and chat actions, and which
// webhook deliveries and controls belong to a call.

const agent: Agent = {
  id: 'agent_1',
  name: 'Ada',
  prompt: 'Be kind.',
  first_message: 'Hello',
  language: 'en-US',
  voice: 'builtin-ava',
  llm: { provider: 'builtin', model: 'builtin', temperature: 0.7 },
  knowledge_base_ids: ['kb_1'],
  transfer_number: '+15550100200',
  functions: [{ name: 'lookup_order', description: 'Find an order', url: 'https://example.com/orders', method: 'POST', parameters: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] }, timeout_ms: 3000 }],
  extraction_fields: [{ name: 'plan', type: 'enum', description: 'The plan chosen', enum: ['basic', 'pro'] }],
  end_call_phrases: [],
  max_duration_seconds: 600,
  turn_end_silence_ms: 500,
  barge_in_min_ms: 250,
  interruptible: true,
  silence_timeout_seconds: 10,
  voicemail: { action: 'leave_message', message: 'Call us back.' },
  webhook_url: null,
  webhook_events: [],
  metadata: {},
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
};

describe('the whole agent draft', () => {
  it('round-trips every field of an agent into the PATCH body', () => {
    const { body, errors } = updateOf(draftOf(agent));
    assert.deepEqual(errors, {});
    assert.deepEqual(body.functions, agent.functions);
    assert.deepEqual(body.extraction_fields, agent.extraction_fields);
    assert.deepEqual(body.voicemail, agent.voicemail);
    assert.equal(body.transfer_number, '+15550100200');
    assert.deepEqual(body.knowledge_base_ids, ['kb_1']);
    assert.equal(body.turn_end_silence_ms, 500);
    assert.equal(body.barge_in_min_ms, 250);
    assert.equal(body.interruptible, true);
    assert.deepEqual(body.metadata, {});
  });

  it('sends no voicemail message when hanging up, an empty transfer number as null, and asks for a message to leave', () => {
    const hangup = updateOf({ ...draftOf(agent), voicemail_action: 'hangup', transfer_number: '  ' }).body;
    assert.deepEqual(hangup.voicemail, { action: 'hangup', message: null });
    assert.equal(hangup.transfer_number, null);
    assert.ok(updateOf({ ...draftOf(agent), voicemail_message: ' ' }).errors.voicemail_message);
    assert.match(String(updateOf({ ...draftOf(agent), metadata: '[]' }).errors.metadata), /JSON object/);
    assert.deepEqual(updateOf({ ...draftOf(agent), metadata: '{"team": "sales"}' }).body.metadata, { team: 'sales' });
  });

  it('maps the API paths of items and nested fields onto the draft', () => {
    assert.equal(draftField('functions.1.parameters'), 'functions.1.parameters');
    assert.equal(draftField('functions.2'), 'functions.2.name');
    assert.equal(draftField('extraction_fields.0.enum'), 'extraction_fields.0.enum');
    assert.equal(draftField('voicemail.message'), 'voicemail_message');
    assert.equal(draftField('llm.provider'), 'llm_provider');
    assert.equal(draftField('knowledge_base_ids.3'), 'knowledge_base_ids');
    assert.equal(draftField('transfer_number'), 'transfer_number');
    assert.equal(draftField('metadata.team'), 'metadata');
    assert.equal(draftField('nothing'), undefined);
  });
});

describe('function schemas', () => {
  it('names a JSON parse error, then each shape problem of an arguments schema', () => {
    assert.match(String(checkSchema('{"type": "object",').error), /^Not valid JSON: /);
    assert.match(String(checkSchema('[]').error), /must be a JSON object/);
    assert.match(String(checkSchema('{"type": "string"}').error), /"type" must be "object"/);
    assert.match(String(checkSchema('{"properties": {"a": 1}}').error), /"properties\.a" must be a schema object/);
    assert.match(String(checkSchema('{"properties": {"a": {"type": "strin"}}}').error), /"strin" is not a JSON Schema type/);
    assert.match(String(checkSchema('{"required": "a"}').error), /"required" must be an array/);
    assert.deepEqual(checkSchema('{"type": "object", "properties": {"a": {"type": ["string", "null"]}}, "required": ["a"]}').error, undefined);
  });

  it('builds example arguments from a schema: defaults, first enum values, a placeholder per type', () => {
    const schema = { type: 'object', properties: { id: { type: 'string' }, n: { type: 'integer' }, ok: { type: 'boolean' }, plan: { enum: ['basic', 'pro'] }, size: { type: 'number', default: 2 }, tags: { type: 'array' }, address: { type: 'object', properties: { city: { type: 'string' } } }, any: {} } };
    assert.deepEqual(exampleArguments(schema), { id: '', n: 0, ok: false, plan: 'basic', size: 2, tags: [], address: { city: '' }, any: null });
    assert.deepEqual(exampleArguments({}), {});
  });

  it('turns function drafts into the API body, naming each problem by its item', () => {
    const errors: Record<string, string> = {};
    const good = functionDraftOf(agent.functions[0]);
    const bad = { ...newFunctionDraft(), parameters: '{ nope', timeout_ms: 'soon' };
    const body = functionsOf([good, bad], errors);
    assert.deepEqual(body[0], agent.functions[0]);
    assert.deepEqual(Object.keys(errors).sort(), ['functions.1.name', 'functions.1.parameters', 'functions.1.timeout_ms', 'functions.1.url']);
  });

  it('reads typed test arguments: empty is {}, anything but an object is refused', () => {
    assert.deepEqual(parseArguments(' '), { value: {} });
    assert.deepEqual(parseArguments('{"a": 1}'), { value: { a: 1 } });
    assert.match(String(parseArguments('[1]').error), /JSON object/);
    assert.match(String(parseArguments('{a}').error), /^Not valid JSON/);
  });

  it('reads test variables as strings, refusing nested values', () => {
    assert.deepEqual(variablesOf('{"customer": "Ada", "vip": true, "n": 2}'), { value: { customer: 'Ada', vip: 'true', n: '2' } });
    assert.deepEqual(variablesOf(''), { value: {} });
    assert.match(String(variablesOf('{"a": {"b": 1}}').error), /"a" must be a string/);
    assert.match(String(variablesOf('{"a"').error), /^Not valid JSON/);
  });
});

describe('extraction fields', () => {
  it('sends enum values only for an enum, and asks for them', () => {
    assert.deepEqual(valuesOf(' a, b,,c '), ['a', 'b', 'c']);
    const errors: Record<string, string> = {};
    const fields = extractionFieldsOf([{ ...newExtractionDraft(), name: 'email', values: 'x' }, { ...newExtractionDraft(), name: 'plan', type: 'enum', values: ' , ' }], errors);
    assert.deepEqual(fields[0], { name: 'email', type: 'string', description: '' });
    assert.deepEqual(Object.keys(errors), ['extraction_fields.1.enum']);
  });
});

describe('the test panel', () => {
  it('reads a caller script: one utterance a line, "[ms]" for a barge-in', () => {
    assert.deepEqual(callerScriptOf('Hi\n\n  [1500] Wait!  \nBye'), ['Hi', { text: 'Wait!', interrupt_after_ms: 1500 }, 'Bye']);
  });

  it('says what the engine did', () => {
    assert.equal(describeAction({ type: 'transfer_call', to: '+15550100200' }), 'Transferred the call to +15550100200');
    assert.equal(describeAction({ type: 'end_call' }), 'Ended the call');
    assert.equal(describeAction({ type: 'function_call', name: 'lookup_order', arguments: { id: 1 }, result: { ok: true } }), 'Called lookup_order({"id":1}) → {"ok":true}');
    assert.equal(describeAction({ type: 'search_knowledge_base', query: 'hours', results: 2 }), 'Searched the knowledge base for “hours” (2 passages)');
  });
});

describe('a call page', () => {
  it('offers hang-up while live, cancel while waiting, transfer only in progress', () => {
    assert.deepEqual(controlsOf({ status: 'in_progress' }), { hangUp: 'hang_up', transfer: true });
    assert.deepEqual(controlsOf({ status: 'queued' }), { hangUp: 'cancel', transfer: false });
    assert.deepEqual(controlsOf({ status: 'completed' }), { hangUp: null, transfer: false });
    assert.equal(hasEnded({ status: 'ringing' }), false);
    assert.equal(settling({ status: 'completed', recording_status: 'pending', analysis_status: 'ready' }), true);
    assert.equal(settling({ status: 'completed', recording_status: 'ready', analysis_status: 'ready' }), false);
  });

  it("finds a call's webhook deliveries: its agent's call events since it began, matched by the envelope's call id", () => {
    assert.equal(callIdOfPayload({ type: 'call.ended', call_id: 'call_1', data: {} }), 'call_1');
    assert.equal(callIdOfPayload({ event: 'call.completed', data: { call_id: 'call_2' } }), 'call_2');
    assert.equal(callIdOfPayload({ event: 'payment.succeeded', data: {} }), undefined);
    const delivery = (id: string, agentId: string, type: string, at: string) => ({ id, agent_id: agentId, event_type: type, created_at: at }) as WebhookDelivery;
    const list = [delivery('d3', 'agent_1', 'call.ended', '2026-01-01T00:00:03.000Z'), delivery('d2', 'agent_1', 'call.started', '2026-01-01T00:00:02.000Z'), delivery('d1', 'agent_1', 'call.ended', '2025-12-31T00:00:00.000Z'), delivery('d4', 'agent_2', 'call.ended', '2026-01-01T00:00:04.000Z'), delivery('d5', 'agent_1', 'webhook.test', '2026-01-01T00:00:05.000Z')];
    assert.deepEqual(candidatesFor(list, { agent_id: 'agent_1', created_at: '2026-01-01T00:00:00.000Z' }).map((d) => d.id), ['d2', 'd3']);
  });

  it("reads a live call's transcript from its call.transcript events: its own, once each, in order", () => {
    const line = (callId: string, role: string, text: string, start: number) => ({ type: 'call.transcript', call_id: callId, data: { role, text, start_ms: start, end_ms: start + 500, turn: 0 } });
    const payloads = [line('call_1', 'user', 'Hi', 2000), line('call_1', 'agent', 'Hello', 0), line('call_2', 'agent', 'Other call', 0), line('call_1', 'user', 'Hi', 2000), { type: 'call.started', call_id: 'call_1', data: {} }];
    assert.deepEqual(transcriptFromEvents(payloads, 'call_1'), [
      { role: 'agent', text: 'Hello', start_ms: 0, end_ms: 500 },
      { role: 'user', text: 'Hi', start_ms: 2000, end_ms: 2500 },
    ]);
  });
});
