import type { Agent, AgentUpdate } from '../../../../sdks/typescript/src/index.ts';
import { type ExtractionDraft, extractionDraftOf, extractionFieldsOf } from './agent/extraction-draft.ts';
import { type FunctionDraft, functionDraftOf, functionsOf } from './agent/function-draft.ts';
import { parseArguments } from './agent/json-text.ts';

// The agent editor's form state: the API's agent as strings the inputs hold, and back to the
// PATCH body (numbers parsed, one end-call phrase per line, an empty first message, transfer
// number or webhook URL as null, functions' JSON Schemas and the metadata parsed). Plain
// functions, unit-tested on Node (test/dashboard/client-logic.test.ts, test/dashboard/agent-logic.test.ts).

export type Language = NonNullable<AgentUpdate['language']>;
export type AgentEvent = NonNullable<AgentUpdate['webhook_events']>[number];
export type VoicemailAction = NonNullable<AgentUpdate['voicemail']>['action'];

export const LANGUAGES: readonly Language[] = ['en-US', 'en-GB', 'en-AU', 'en-IN', 'en-CA', 'es-ES', 'es-MX', 'es-US', 'fr-FR', 'fr-CA', 'de-DE', 'it-IT', 'pt-BR', 'pt-PT', 'nl-NL', 'sv-SE', 'da-DK', 'nb-NO', 'fi-FI', 'pl-PL', 'tr-TR', 'ru-RU', 'uk-UA', 'ja-JP', 'ko-KR', 'zh-CN', 'hi-IN', 'ar-SA'];
export const AGENT_EVENTS: readonly AgentEvent[] = ['call.started', 'call.transcript', 'call.transfer', 'call.error', 'call.ended', 'call.completed', 'call.transferred', 'call.failed'];

export interface AgentDraft {
  name: string;
  prompt: string;
  first_message: string;
  language: string;
  voice: string;
  llm_provider: 'builtin' | 'openai' | 'openai-realtime';
  llm_model: string;
  llm_temperature: string;
  end_call_phrases: string;
  max_duration_seconds: string;
  silence_timeout_seconds: string;
  turn_end_silence_ms: string;
  barge_in_min_ms: string;
  interruptible: boolean;
  transfer_number: string;
  voicemail_action: VoicemailAction;
  voicemail_message: string;
  knowledge_base_ids: string[];
  functions: FunctionDraft[];
  extraction_fields: ExtractionDraft[];
  webhook_url: string;
  webhook_events: string[];
  /** Free-form JSON object. */
  metadata: string;
}

export function draftOf(agent: Agent): AgentDraft {
  return {
    name: agent.name,
    prompt: agent.prompt,
    first_message: agent.first_message ?? '',
    language: agent.language,
    voice: agent.voice,
    llm_provider: agent.llm.provider,
    llm_model: agent.llm.model,
    llm_temperature: String(agent.llm.temperature),
    end_call_phrases: agent.end_call_phrases.join('\n'),
    max_duration_seconds: String(agent.max_duration_seconds),
    silence_timeout_seconds: String(agent.silence_timeout_seconds),
    turn_end_silence_ms: String(agent.turn_end_silence_ms),
    barge_in_min_ms: String(agent.barge_in_min_ms),
    interruptible: agent.interruptible,
    transfer_number: agent.transfer_number ?? '',
    voicemail_action: agent.voicemail.action,
    voicemail_message: agent.voicemail.message ?? '',
    knowledge_base_ids: [...agent.knowledge_base_ids],
    functions: agent.functions.map(functionDraftOf),
    extraction_fields: agent.extraction_fields.map(extractionDraftOf),
    webhook_url: agent.webhook_url ?? '',
    webhook_events: [...agent.webhook_events],
    metadata: JSON.stringify(agent.metadata, null, 2),
  };
}

/** Problems to fix, by draft path: a field (`llm_temperature`) or an item's (`functions.0.parameters`). */
export type DraftErrors = Record<string, string>;

function integer(text: string): number | undefined {
  return /^\s*\d+\s*$/.test(text) ? Number(text) : undefined;
}

const orNull = (text: string) => (text.trim() === '' ? null : text.trim());

function numbersOf(draft: AgentDraft, errors: DraftErrors) {
  const temperature = Number(draft.llm_temperature);
  if (draft.llm_temperature.trim() === '' || !Number.isFinite(temperature)) errors.llm_temperature = 'Enter a number, e.g. 0.7';
  const whole = (key: 'max_duration_seconds' | 'silence_timeout_seconds' | 'turn_end_silence_ms' | 'barge_in_min_ms', unit: string) => {
    const value = integer(draft[key]);
    if (value === undefined) errors[key] = `Enter a whole number of ${unit}`;
    return value;
  };
  return {
    temperature,
    max_duration_seconds: whole('max_duration_seconds', 'seconds'),
    silence_timeout_seconds: whole('silence_timeout_seconds', 'seconds'),
    turn_end_silence_ms: whole('turn_end_silence_ms', 'milliseconds'),
    barge_in_min_ms: whole('barge_in_min_ms', 'milliseconds'),
  };
}

/** The PATCH body, or the fields the form must fix first (the API checks ranges itself). */
export function updateOf(draft: AgentDraft): { body: AgentUpdate; errors: DraftErrors } {
  const errors: DraftErrors = {};
  const { temperature, ...whole } = numbersOf(draft, errors);
  if (draft.voicemail_action === 'leave_message' && draft.voicemail_message.trim() === '') errors.voicemail_message = 'Write the message the agent leaves';
  const metadata = parseArguments(draft.metadata);
  if (metadata.error) errors.metadata = metadata.error;
  const body: AgentUpdate = {
    name: draft.name.trim(),
    prompt: draft.prompt,
    first_message: draft.first_message.trim() === '' ? null : draft.first_message,
    language: draft.language as Language,
    voice: draft.voice,
    llm: { provider: draft.llm_provider, model: draft.llm_model.trim(), temperature },
    end_call_phrases: draft.end_call_phrases
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean),
    ...whole,
    interruptible: draft.interruptible,
    transfer_number: orNull(draft.transfer_number),
    voicemail: { action: draft.voicemail_action, message: draft.voicemail_action === 'leave_message' ? draft.voicemail_message.trim() : null },
    knowledge_base_ids: [...draft.knowledge_base_ids],
    functions: functionsOf(draft.functions, errors),
    extraction_fields: extractionFieldsOf(draft.extraction_fields, errors),
    webhook_url: orNull(draft.webhook_url),
    webhook_events: draft.webhook_events as AgentEvent[],
    metadata: metadata.value ?? {},
  };
  return { body, errors };
}

const TOP_LEVEL = new Set<string>(['name', 'prompt', 'first_message', 'language', 'voice', 'llm_provider', 'llm_model', 'llm_temperature', 'end_call_phrases', 'max_duration_seconds', 'silence_timeout_seconds', 'turn_end_silence_ms', 'barge_in_min_ms', 'interruptible', 'transfer_number', 'voicemail_action', 'voicemail_message', 'knowledge_base_ids', 'functions', 'extraction_fields', 'webhook_url', 'webhook_events', 'metadata']);

/** The API's field paths (`llm.temperature`, `functions.0.url`) as the draft's error paths. */
export function draftField(path: string): string | undefined {
  const item = /^(functions|extraction_fields)\.(\d+)(?:\.(\w+))?/.exec(path);
  if (item) return `${item[1]}.${item[2]}.${item[3] ?? 'name'}`;
  const name = path
    .replace(/^(llm|voicemail)\./, '$1_')
    .replace(/^voicemail$/, 'voicemail_action')
    .replace(/^metadata\..*$/, 'metadata')
    .replace(/\.\d+$/, '');
  return TOP_LEVEL.has(name) ? name : undefined;
}
