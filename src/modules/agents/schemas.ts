import { type Static, Type } from 'typebox';
import { EXTRACTION_FIELD_TYPES, FUNCTION_METHODS } from '../../ports/llm.ts';
import { ListQuery, Nullable, Timestamp } from '../../platform/http/schemas.ts';
import { idPattern } from '../../platform/ids.ts';
import { EVENT_TYPES, SUBSCRIBABLE_EVENT_TYPES } from '../../platform/outbox/catalog.ts';

// Agents: configuration of a voice agent (prompt, voice, LLM, tools, webhooks), its chat test
// endpoint and its function test endpoint.

/** Languages an agent may speak (BCP 47). The built-in engines handle them all. */
export const SUPPORTED_LANGUAGES = [
  'en-US', 'en-GB', 'en-AU', 'en-IN', 'en-CA', 'es-ES', 'es-MX', 'es-US', 'fr-FR', 'fr-CA', 'de-DE', 'it-IT',
  'pt-BR', 'pt-PT', 'nl-NL', 'sv-SE', 'da-DK', 'nb-NO', 'fi-FI', 'pl-PL', 'tr-TR', 'ru-RU', 'uk-UA', 'ja-JP',
  'ko-KR', 'zh-CN', 'hi-IN', 'ar-SA',
] as const;
export const DEFAULT_LANGUAGE = 'en-US';

export const LLM_PROVIDERS = ['builtin', 'openai', 'openai-realtime'] as const;
/** The voices a speech-to-speech agent (`openai-realtime`) speaks with: the Realtime API's own. */
export const REALTIME_VOICES = ['alloy', 'ash', 'ballad', 'coral', 'echo', 'sage', 'shimmer', 'verse', 'marin', 'cedar'] as const;
export const BUILTIN_LLM_MODEL = 'builtin';

export const VOICEMAIL_ACTIONS = ['hangup', 'leave_message'] as const;

/** Call events an agent webhook can receive (DESIGN part 6, listings A and B), from the event catalog. */
export const AGENT_WEBHOOK_EVENTS = SUBSCRIBABLE_EVENT_TYPES.filter((type) => EVENT_TYPES[type].agent);

export const IDENTIFIER = '^[a-zA-Z_][a-zA-Z0-9_]{0,63}$';
export const WEBHOOK_SECRET = Type.String({ description: 'whsec_ secret; shown only by create, duplicate and rotate', examples: ['whsec_bXlzZWNyZXRteXNlY3JldG15c2VjcmV0'] });

const Language = Type.Enum(SUPPORTED_LANGUAGES, { description: 'BCP 47 language tag', default: DEFAULT_LANGUAGE });
const Url = Type.String({ minLength: 1, maxLength: 2048, description: 'http(s) URL; private addresses are refused' });
const Metadata = Type.Record(Type.String({ maxLength: 100 }), Type.Unknown(), { maxProperties: 50, description: 'Free-form key/value data' });

export const Llm = Type.Object(
  {
    provider: Type.Enum(LLM_PROVIDERS, { description: 'builtin (offline), openai (OpenAI-compatible, needs LLM_BASE_URL) or openai-realtime (a speech-to-speech model over the OpenAI Realtime API, needs REALTIME_BASE_URL)' }),
    model: Type.String({ minLength: 1, maxLength: 100 }),
    temperature: Type.Number({ minimum: 0, maximum: 2 }),
  },
  { title: 'AgentLlm' },
);
export const LlmInput = Type.Object(
  {
    provider: Type.Optional(Llm.properties.provider),
    model: Type.Optional(Llm.properties.model),
    temperature: Type.Optional(Llm.properties.temperature),
  },
  { additionalProperties: false, description: 'Defaults: builtin, its default model, temperature 0.7' },
);

export const AgentFunction = Type.Object(
  {
    name: Type.String({ pattern: IDENTIFIER, description: 'Unique within the agent' }),
    description: Type.String({ maxLength: 1000 }),
    url: Url,
    method: Type.Enum(FUNCTION_METHODS),
    parameters: Type.Record(Type.String(), Type.Unknown(), { description: 'JSON Schema of the arguments object' }),
    timeout_ms: Type.Integer({ minimum: 100, maximum: 30_000 }),
  },
  { title: 'AgentFunction' },
);
export const AgentFunctionInput = Type.Object(
  {
    name: AgentFunction.properties.name,
    description: Type.Optional(AgentFunction.properties.description),
    url: Url,
    method: Type.Optional(Type.Enum(FUNCTION_METHODS, { description: 'Default POST' })),
    parameters: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { maxProperties: 50, description: 'JSON Schema (default: an object with no properties)' })),
    timeout_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 30_000, description: 'Default 5000' })),
  },
  { additionalProperties: false },
);

export const ExtractionField = Type.Object(
  {
    name: Type.String({ pattern: IDENTIFIER }),
    type: Type.Enum(EXTRACTION_FIELD_TYPES),
    description: Type.String({ maxLength: 1000 }),
    enum: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: 50 })),
  },
  { title: 'ExtractionField' },
);
export const ExtractionFieldInput = Type.Object(
  {
    name: ExtractionField.properties.name,
    type: ExtractionField.properties.type,
    description: Type.Optional(ExtractionField.properties.description),
    enum: ExtractionField.properties.enum,
  },
  { additionalProperties: false },
);

export const Voicemail = Type.Object(
  {
    action: Type.Enum(VOICEMAIL_ACTIONS),
    message: Nullable(Type.String({ maxLength: 2000 })),
  },
  { title: 'Voicemail' },
);
export const VoicemailInput = Type.Object(
  {
    action: Voicemail.properties.action,
    message: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 2000, description: 'Required when action is leave_message' }))),
  },
  { additionalProperties: false },
);

const KnowledgeBaseId = Type.String({ pattern: idPattern('kb') });
const WebhookEvent = Type.Enum(AGENT_WEBHOOK_EVENTS);

/** Every writable field; create requires `name`, update none. */
const writable = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  prompt: Type.String({ maxLength: 50_000, description: 'System prompt; {{variables}} are substituted' }),
  first_message: Nullable(Type.String({ maxLength: 2000, description: 'What the agent says first; {{variables}} are substituted' })),
  language: Language,
  voice: Type.String({ minLength: 1, maxLength: 100, description: 'Id of a voice of GET /v1/voices (default builtin-ava)' }),
  llm: LlmInput,
  knowledge_base_ids: Type.Array(KnowledgeBaseId, { maxItems: 20, uniqueItems: true }),
  transfer_number: Nullable(Type.String({ maxLength: 32, description: 'E.164 number calls are transferred to' })),
  functions: Type.Array(AgentFunctionInput, { maxItems: 32 }),
  extraction_fields: Type.Array(ExtractionFieldInput, { maxItems: 50 }),
  end_call_phrases: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 50 }),
  max_duration_seconds: Type.Integer({ minimum: 10, maximum: 14_400, description: 'Default 600' }),
  turn_end_silence_ms: Type.Integer({ minimum: 100, maximum: 5000, description: "Silence that ends the caller's turn (default 500)" }),
  barge_in_min_ms: Type.Integer({ minimum: 50, maximum: 2000, description: 'Caller speech over the agent that interrupts it (default 250)' }),
  interruptible: Type.Boolean({ description: 'Barge-in on (default true)' }),
  silence_timeout_seconds: Type.Integer({ minimum: 2, maximum: 600, description: 'Caller silence before "are you still there?", then the end of the call (default 10)' }),
  voicemail: VoicemailInput,
  webhook_url: Nullable(Url),
  webhook_events: Type.Array(WebhookEvent, { maxItems: 50, uniqueItems: true, description: 'Call events sent to webhook_url; empty means all' }),
  metadata: Metadata,
};

/** Every writable field, optional: the update body, and the create body once `name` is required. */
const optionalWritable = Type.Partial(Type.Object(writable)).properties;

export const AgentCreate = Type.Object(
  { ...optionalWritable, name: writable.name },
  {
    additionalProperties: false,
    title: 'AgentCreate',
    examples: [
      {
        name: 'Front desk',
        prompt: 'You are the receptionist of {{company}}. Be brief and friendly.',
        first_message: 'Hello, {{company}} here. How can I help?',
        language: 'en-US',
        voice: 'builtin-ava',
        llm: { provider: 'builtin', temperature: 0.5 },
        transfer_number: '+15550100200',
        functions: [
          {
            name: 'check_order',
            description: 'Check the status of an order',
            url: 'https://example.com/api/orders',
            method: 'POST',
            parameters: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] },
            timeout_ms: 5000,
          },
        ],
        extraction_fields: [{ name: 'email', type: 'string', description: 'Caller email address' }],
        end_call_phrases: ['goodbye'],
        webhook_url: 'https://example.com/hooks/voice',
        webhook_events: ['call.ended'],
      },
    ],
  },
);
export type AgentCreate = Static<typeof AgentCreate>;

export const AgentUpdate = Type.Object(
  optionalWritable,
  { additionalProperties: false, title: 'AgentUpdate', description: 'Fields to change; llm is merged, every other field is replaced' },
);
export type AgentUpdate = Static<typeof AgentUpdate>;

const agentFields = {
  id: Type.String({ examples: ['agent_01jdq3x4k5m6n7p8q9r0s1t2v3'] }),
  name: Type.String(),
  prompt: Type.String(),
  first_message: Nullable(Type.String()),
  language: Type.String({ examples: [DEFAULT_LANGUAGE] }),
  voice: Type.String({ examples: ['builtin-ava'] }),
  llm: Llm,
  knowledge_base_ids: Type.Array(Type.String()),
  transfer_number: Nullable(Type.String({ examples: ['+15550100200'] })),
  functions: Type.Array(AgentFunction),
  extraction_fields: Type.Array(ExtractionField),
  end_call_phrases: Type.Array(Type.String()),
  max_duration_seconds: Type.Integer(),
  turn_end_silence_ms: Type.Integer(),
  barge_in_min_ms: Type.Integer(),
  interruptible: Type.Boolean(),
  silence_timeout_seconds: Type.Integer(),
  voicemail: Voicemail,
  webhook_url: Nullable(Type.String()),
  webhook_events: Type.Array(Type.String()),
  metadata: Type.Record(Type.String(), Type.Unknown()),
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const Agent = Type.Object(agentFields, { title: 'Agent' });
export type Agent = Static<typeof Agent>;

export const AgentWithSecret = Type.Object({ ...agentFields, webhook_secret: WEBHOOK_SECRET }, { title: 'AgentWithSecret' });
export type AgentWithSecret = Static<typeof AgentWithSecret>;

export const AgentListQuery = Type.Object({
  ...ListQuery.properties,
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Case-insensitive substring of the name' })),
  language: Type.Optional(Type.String({ maxLength: 20, description: 'Exact language tag' })),
});
export type AgentListQuery = Static<typeof AgentListQuery>;

export const AgentDuplicate = Type.Object(
  { name: Type.Optional(writable.name) },
  { additionalProperties: false, description: 'Name of the copy (default "<name> (copy)")' },
);
export type AgentDuplicate = Static<typeof AgentDuplicate>;

export const WebhookSecret = Type.Object({ webhook_secret: WEBHOOK_SECRET }, { title: 'AgentWebhookSecret' });

export const WebhookTestBody = Type.Object(
  { message: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })) },
  { additionalProperties: false },
);
export const WebhookTestResult = Type.Object({ event_id: Type.String({ examples: ['evt_01jdq3x4k5m6n7p8q9r0s1t2v3'] }) }, { title: 'WebhookTestResult' });

export const FunctionTestBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64, description: 'Name of one of the agent functions' }),
    arguments: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { maxProperties: 100, description: 'Arguments object sent to the function' })),
  },
  { additionalProperties: false },
);
export type FunctionTestBody = Static<typeof FunctionTestBody>;

export const FUNCTION_ERROR_CODES = ['timeout', 'connection_failed', 'url_refused'] as const;
export const FunctionTestResult = Type.Object(
  {
    status: Nullable(Type.Integer({ description: 'HTTP status of the function; null when no response came' })),
    body: Type.Unknown({ description: 'Parsed JSON body, or a text excerpt (at most 2000 characters)' }),
    duration_ms: Type.Integer(),
    error: Nullable(
      Type.Object({
        code: Type.Enum(FUNCTION_ERROR_CODES),
        message: Type.String(),
      }),
    ),
  },
  { title: 'FunctionTestResult' },
);
export type FunctionTestResult = Static<typeof FunctionTestResult>;

export const ChatBody = Type.Object(
  {
    message: Type.String({ minLength: 1, maxLength: 2000 }),
    conversation_id: Type.Optional(Type.String({ maxLength: 100, description: 'conv_ id of an earlier reply to continue that conversation' })),
    variables: Type.Optional(
      Type.Record(Type.String({ maxLength: 100 }), Type.Union([Type.String({ maxLength: 2000 }), Type.Number(), Type.Boolean()]), {
        maxProperties: 50,
        description: 'Values for {{variables}}; merged into those of the conversation',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ChatBody = Static<typeof ChatBody>;

export const ChatAction = Type.Object(
  {
    type: Type.String({ description: 'transfer_call, end_call, function_call or search_knowledge_base' }),
    to: Type.Optional(Type.String()),
    reason: Type.Optional(Type.String()),
    name: Type.Optional(Type.String()),
    arguments: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    result: Type.Optional(Type.Unknown()),
    query: Type.Optional(Type.String()),
    results: Type.Optional(Type.Integer()),
  },
  { title: 'ChatAction' },
);

export const ChatReply = Type.Object(
  {
    conversation_id: Type.String({ examples: ['conv_01jdq3x4k5m6n7p8q9r0s1t2v3'] }),
    reply: Type.String(),
    actions: Type.Array(ChatAction),
    ended: Type.Boolean({ description: 'The agent ended or transferred the conversation' }),
  },
  { title: 'ChatReply' },
);
export type ChatReply = Static<typeof ChatReply>;
