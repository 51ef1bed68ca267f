import type { Agent, AgentUpdate } from '../../../../sdks/typescript/src/index.ts';

// The agent editor's form state: the API's agent as strings the inputs hold, and back to the
// PATCH body (numbers parsed, one end-call phrase per line, an empty first message or webhook
// URL as null). Plain functions: unit-tested on Node (test/dashboard/agent-draft.test.ts).

export type Language = NonNullable<AgentUpdate['language']>;
export type AgentEvent = NonNullable<AgentUpdate['webhook_events']>[number];

export const LANGUAGES: readonly Language[] = ['en-US', 'en-GB', 'en-AU', 'en-IN', 'en-CA', 'es-ES', 'es-MX', 'es-US', 'fr-FR', 'fr-CA', 'de-DE', 'it-IT', 'pt-BR', 'pt-PT', 'nl-NL', 'sv-SE', 'da-DK', 'nb-NO', 'fi-FI', 'pl-PL', 'tr-TR', 'ru-RU', 'uk-UA', 'ja-JP', 'ko-KR', 'zh-CN', 'hi-IN', 'ar-SA'];
export const AGENT_EVENTS: readonly AgentEvent[] = ['call.started', 'call.transcript', 'call.transfer', 'call.error', 'call.ended', 'call.completed', 'call.transferred', 'call.failed'];

export interface AgentDraft {
  name: string;
  prompt: string;
  first_message: string;
  language: string;
  voice: string;
  llm_provider: 'builtin' | 'openai';
  llm_model: string;
  llm_temperature: string;
  end_call_phrases: string;
  max_duration_seconds: string;
  silence_timeout_seconds: string;
  webhook_url: string;
  webhook_events: string[];
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
    webhook_url: agent.webhook_url ?? '',
    webhook_events: [...agent.webhook_events],
  };
}

export type DraftErrors = Partial<Record<keyof AgentDraft, string>>;

function integer(text: string): number | undefined {
  return /^\s*\d+\s*$/.test(text) ? Number(text) : undefined;
}

/** The PATCH body, or the fields the form must fix first (the API checks ranges itself). */
export function updateOf(draft: AgentDraft): { body: AgentUpdate; errors: DraftErrors } {
  const errors: DraftErrors = {};
  const temperature = Number(draft.llm_temperature);
  if (draft.llm_temperature.trim() === '' || !Number.isFinite(temperature)) errors.llm_temperature = 'Enter a number, e.g. 0.7';
  const maxDuration = integer(draft.max_duration_seconds);
  if (maxDuration === undefined) errors.max_duration_seconds = 'Enter a whole number of seconds';
  const silence = integer(draft.silence_timeout_seconds);
  if (silence === undefined) errors.silence_timeout_seconds = 'Enter a whole number of seconds';
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
    max_duration_seconds: maxDuration,
    silence_timeout_seconds: silence,
    webhook_url: draft.webhook_url.trim() === '' ? null : draft.webhook_url.trim(),
    webhook_events: draft.webhook_events as AgentEvent[],
  };
  return { body, errors };
}

/** The API's field paths (`llm.temperature`) as the draft's field names. */
export function draftField(path: string): keyof AgentDraft | undefined {
  const name = path.replace(/^llm\./, 'llm_').replace(/\.\d+$/, '');
  return name in EMPTY ? (name as keyof AgentDraft) : undefined;
}

const EMPTY: AgentDraft = {
  name: '',
  prompt: '',
  first_message: '',
  language: 'en-US',
  voice: '',
  llm_provider: 'builtin',
  llm_model: '',
  llm_temperature: '',
  end_call_phrases: '',
  max_duration_seconds: '',
  silence_timeout_seconds: '',
  webhook_url: '',
  webhook_events: [],
};
