import { Ajv } from 'ajv';
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import type { Config } from '../../config.ts';
import type { DialogueEngine, FunctionInvoker } from '../../engine/types.ts';
import { type EngineAgent, ENGINE_TOOL_NAMES, LlmError, type Turn } from '../../ports/llm.ts';
import type { WorkspaceContext } from '../../platform/auth/access.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db/schema.ts';
import { AppError, type FieldError, invalidState, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { assertUrlField } from '../../platform/outbound/ssrf-guard.ts';
import type { EventEmitter } from '../../platform/outbox/emit.ts';
import { type Page, pageRequest, toPage } from '../../platform/pagination.ts';
import { DEFAULT_VOICE_ID, type TtsRegistry } from '../../ports/tts.ts';
import { newWebhookSecret } from '../../platform/outbox/signing.ts';
import type { FunctionCaller } from './functions.ts';
import type { AgentRow, AgentsRepo, AgentValues } from './repo.ts';
import {
  type Agent,
  type AgentCreate,
  type AgentDuplicate,
  type AgentListQuery,
  type AgentUpdate,
  type AgentWithSecret,
  BUILTIN_LLM_MODEL,
  type ChatBody,
  type ChatReply,
  DEFAULT_LANGUAGE,
  type FunctionTestBody,
  REALTIME_VOICES,
  type FunctionTestResult,
} from './schemas.ts';
import type { StoredTurn } from './tables.ts';
import { agentDestination, engineAgentOf, presentAgent } from './present.ts';

export const DEFAULT_MAX_DURATION_SECONDS = 600;
export const DEFAULT_FUNCTION_TIMEOUT_MS = 5000;
export const DEFAULT_TEMPERATURE = 0.7;
/** Turns kept in one chat conversation; a longer one must start over. */
export const MAX_CONVERSATION_TURNS = 200;

/** Where a chat conversation comes from: the API's chat test, or a widget (and its visitor). */
export interface ConversationOrigin {
  channel: 'api' | 'widget';
  widgetId?: string;
  visitorId?: string;
  /** The greeting the visitor was shown, kept as the first turn (default: the agent's). */
  greeting?: string;
}

export interface AgentsServiceDeps {
  db: Database;
  clock: Clock;
  config: Pick<Config, 'allowPrivateUrls' | 'llm' | 'realtime'>;
  repo: AgentsRepo;
  tts: Pick<TtsRegistry, 'findVoice'>;
  functions: FunctionCaller;
  /** The events engine (platform.events). */
  events: EventEmitter;
  /** Builds the dialogue engine for one agent, with that agent's function invoker. */
  engineFor(agent: EngineAgent, functions: FunctionInvoker): DialogueEngine;
}

// One Ajv for checking that function parameters are valid JSON Schemas (compiling them validates
// against the meta-schema). Compiled functions are not kept: parameters change with every agent.
// Unknown keywords and formats are allowed (models read them as hints), and never logged.
const schemaChecker = new Ajv({ strict: false, allErrors: false, addUsedSchema: false, validateFormats: false, logger: false });

function jsonSchemaProblem(schema: Record<string, unknown>): string | null {
  if (schema.type !== undefined && schema.type !== 'object') return 'must describe an object (type "object")';
  try {
    schemaChecker.compile(schema);
    return null;
  } catch (error) {
    return `is not a valid JSON Schema: ${(error as Error).message.slice(0, 300)}`;
  }
}

export function createAgentsService(deps: AgentsServiceDeps) {
  const { db, clock, config, repo } = deps;

  /** Defaults for a create, then the same checks as an update. */
  function valuesForCreate(body: AgentCreate): AgentValues {
    return {
      name: body.name,
      prompt: body.prompt ?? '',
      first_message: body.first_message ?? null,
      language: body.language ?? DEFAULT_LANGUAGE,
      voice: body.voice ?? (body.llm?.provider === 'openai-realtime' ? REALTIME_VOICES[0] : DEFAULT_VOICE_ID),
      llm: normaliseLlm(body.llm ?? {}, undefined),
      knowledge_base_ids: body.knowledge_base_ids ?? [],
      transfer_number: body.transfer_number ?? null,
      functions: normaliseFunctions(body.functions ?? []),
      extraction_fields: normaliseFields(body.extraction_fields ?? []),
      end_call_phrases: body.end_call_phrases ?? [],
      max_duration_seconds: body.max_duration_seconds ?? DEFAULT_MAX_DURATION_SECONDS,
      turn_end_silence_ms: body.turn_end_silence_ms ?? 500,
      barge_in_min_ms: body.barge_in_min_ms ?? 250,
      interruptible: body.interruptible ?? true,
      silence_timeout_seconds: body.silence_timeout_seconds ?? 10,
      voicemail: body.voicemail ? { action: body.voicemail.action, message: body.voicemail.message ?? null } : { action: 'hangup', message: null },
      webhook_url: body.webhook_url ?? null,
      webhook_events: body.webhook_events ?? [],
      metadata: body.metadata ?? {},
    };
  }

  function normaliseLlm(input: NonNullable<AgentCreate['llm']>, current: AgentRow['llm'] | undefined): AgentValues['llm'] {
    const provider = input.provider ?? current?.provider ?? 'builtin';
    const providerChanged = current !== undefined && provider !== current.provider;
    const defaultModel = provider === 'builtin' ? BUILTIN_LLM_MODEL : provider === 'openai-realtime' ? config.realtime.model : config.llm.model;
    return {
      provider,
      model: input.model ?? (current && !providerChanged ? current.model : defaultModel),
      temperature: input.temperature ?? current?.temperature ?? DEFAULT_TEMPERATURE,
    };
  }

  function normaliseFunctions(functions: NonNullable<AgentCreate['functions']>): AgentValues['functions'] {
    return functions.map((fn) => ({
      name: fn.name,
      description: fn.description ?? '',
      url: fn.url,
      method: fn.method ?? 'POST',
      parameters: fn.parameters ?? { type: 'object', properties: {} },
      timeout_ms: fn.timeout_ms ?? DEFAULT_FUNCTION_TIMEOUT_MS,
    }));
  }

  function normaliseFields(fields: NonNullable<AgentCreate['extraction_fields']>): AgentValues['extraction_fields'] {
    return fields.map((f) => ({ name: f.name, type: f.type, description: f.description ?? '', ...(f.enum ? { enum: f.enum } : {}) }));
  }

  /**
   * The checks a schema cannot express, on the fields being written; every problem is reported
   * at once (422 with one entry per field). Normalises transfer_number to E.164.
   */
  async function validate(ctx: WorkspaceContext, values: Partial<AgentValues>, current?: AgentRow): Promise<Partial<AgentValues>> {
    const errors: FieldError[] = [];
    const fail = (path: string, message: string) => errors.push({ path, message });
    const urlChecks: Array<Promise<void>> = [];
    const checkUrl = (path: string, url: string) =>
      urlChecks.push(
        assertUrlField(path, url, { allowPrivate: config.allowPrivateUrls }).catch((error: unknown) => {
          if (error instanceof AppError && error.errors) errors.push(...error.errors);
          else throw error;
        }),
      );
    const out = { ...values };

    // A speech-to-speech agent speaks with the model's own voices; switching kinds without naming a voice takes the kind's default.
    const realtime = (values.llm ?? current?.llm)?.provider === 'openai-realtime';
    const realtimeVoice = (voice: string) => (REALTIME_VOICES as readonly string[]).includes(voice);
    if (values.voice !== undefined) {
      if (realtime && !realtimeVoice(values.voice)) fail('voice', `a speech-to-speech agent speaks with the model's own voices: ${REALTIME_VOICES.join(', ')}`);
      else if (!realtime && !deps.tts.findVoice(values.voice)) fail('voice', `unknown voice "${values.voice}"; see GET /v1/voices`);
    } else if (values.llm && current && realtime !== realtimeVoice(current.voice)) out.voice = realtime ? REALTIME_VOICES[0] : DEFAULT_VOICE_ID;

    if (values.llm?.provider === 'openai' && !config.llm.baseUrl) {
      fail('llm.provider', 'openai needs LLM_BASE_URL configured on this server; use builtin');
    }
    if (values.llm?.provider === 'openai-realtime' && !config.realtime.baseUrl) {
      fail('llm.provider', 'openai-realtime needs REALTIME_BASE_URL configured on this server; use builtin');
    }

    if (values.transfer_number !== undefined && values.transfer_number !== null) {
      const parsed = parsePhoneNumberFromString(values.transfer_number);
      if (!parsed?.isPossible()) fail('transfer_number', 'must be a phone number in E.164 format, such as +15550100200');
      else out.transfer_number = parsed.number;
    }

    if (values.functions) {
      const seen = new Map<string, number>();
      values.functions.forEach((fn, i) => {
        const first = seen.get(fn.name);
        if ((ENGINE_TOOL_NAMES as readonly string[]).includes(fn.name)) fail(`functions.${i}.name`, `"${fn.name}" is a built-in tool of the engine; choose another name`);
        else if (first !== undefined) fail(`functions.${i}.name`, `duplicates functions.${first}.name ("${fn.name}")`);
        else seen.set(fn.name, i);
        const problem = jsonSchemaProblem(fn.parameters as Record<string, unknown>);
        if (problem) fail(`functions.${i}.parameters`, problem);
        checkUrl(`functions.${i}.url`, fn.url);
      });
    }

    if (values.extraction_fields) {
      const seen = new Map<string, number>();
      values.extraction_fields.forEach((field, i) => {
        const first = seen.get(field.name);
        if (first !== undefined) fail(`extraction_fields.${i}.name`, `duplicates extraction_fields.${first}.name ("${field.name}")`);
        else seen.set(field.name, i);
        if (field.type === 'enum' && !field.enum) fail(`extraction_fields.${i}.enum`, 'is required when type is enum');
        if (field.type !== 'enum' && field.enum) fail(`extraction_fields.${i}.enum`, 'is allowed only when type is enum');
      });
    }

    if (values.voicemail?.action === 'leave_message' && !values.voicemail.message) {
      fail('voicemail.message', 'is required when action is leave_message');
    }

    if (values.webhook_url) checkUrl('webhook_url', values.webhook_url);

    if (values.knowledge_base_ids && values.knowledge_base_ids.length > 0) {
      const known = await repo.existingKnowledgeBaseIds(db, ctx.workspaceId, values.knowledge_base_ids);
      values.knowledge_base_ids.forEach((id, i) => {
        if (!known.has(id)) fail(`knowledge_base_ids.${i}`, `knowledge base ${id} not found in this workspace`);
      });
    }

    await Promise.all(urlChecks);
    if (errors.length > 0) {
      throw new AppError('validation_failed', errors.map((e) => `${e.path}: ${e.message}`).join('; '), { errors });
    }
    return out;
  }

  async function mustFind(ctx: WorkspaceContext, id: string): Promise<AgentRow> {
    const row = await repo.find(db, ctx.workspaceId, id);
    if (!row) throw notFound('agent');
    return row;
  }

  async function insert(ctx: WorkspaceContext, values: AgentValues): Promise<AgentWithSecret> {
    const secret = newWebhookSecret();
    const row = await repo.insert(db, { id: newId('agent'), workspaceId: ctx.workspaceId, values, webhookSecret: secret, now: clock.now() });
    return { ...presentAgent(row), webhook_secret: secret };
  }

  /**
   * One message to the agent and its reply, the conversation kept (the API's chat test and the
   * widgets' public chat). A conversation continues only through the channel and widget it began in.
   */
  async function converse(workspaceId: string, id: string, body: ChatBody, via: ConversationOrigin): Promise<ChatReply> {
    const row = await repo.find(db, workspaceId, id);
    if (!row) throw notFound('agent');
    const agent = engineAgentOf(row);
    const incoming = Object.fromEntries(Object.entries(body.variables ?? {}).map(([k, v]) => [k, String(v)]));
    const found = body.conversation_id ? await repo.findConversation(db, workspaceId, row.id, body.conversation_id) : undefined;
    const conversation = found && found.channel === via.channel && found.widget_id === (via.widgetId ?? null) ? found : undefined;
    if (body.conversation_id && !conversation) throw notFound('conversation');
    if (conversation?.ended) throw invalidState('this conversation has ended; start a new one without conversation_id');
    if (conversation && conversation.turns.length >= MAX_CONVERSATION_TURNS) {
      throw invalidState(`a conversation holds at most ${MAX_CONVERSATION_TURNS} turns; start a new one`);
    }
    const conversationId = conversation?.id ?? newId('conv');
    const variables = { ...(conversation?.variables ?? {}), ...incoming };
    const engine = deps.engineFor(agent, deps.functions.invokerFor({ agentId: row.id, secret: row.webhook_secret, conversationId }));

    const now = () => clock.now().toISOString();
    const newTurns: StoredTurn[] = [];
    let history: Turn[] = (conversation?.turns ?? []).map((t) => ({ role: t.role, text: t.text }));
    if (!conversation) {
      const greeting: Turn = via.greeting ? { role: 'agent', text: via.greeting } : engine.greet(agent, variables);
      if (greeting.text) {
        newTurns.push({ ...greeting, at: now() });
        history = [greeting];
      }
    }
    // The engine may call the LLM and functions over the network: no transaction is open here.
    const result = await engine.respond({ workspaceId, agent, history, userText: body.message, variables }).catch((error) => {
      // The model server failed (down, refused our key, answered garbage): the caller's request was fine.
      if (error instanceof LlmError) throw new AppError('upstream_error', `the language model did not answer: ${error.message}`);
      throw error;
    });
    newTurns.push({ role: 'user', text: body.message, at: now() }, { role: 'agent', text: result.reply, at: now() });

    if (conversation) {
      await repo.appendToConversation(db, workspaceId, conversation.id, { turns: newTurns, variables, ended: result.ended, now: clock.now() });
    } else {
      await repo.insertConversation(db, {
        id: conversationId,
        workspaceId,
        agentId: row.id,
        channel: via.channel,
        widgetId: via.widgetId ?? null,
        visitorId: via.visitorId ?? null,
        variables,
        turns: newTurns,
        ended: result.ended,
        now: clock.now(),
      });
    }
    return { conversation_id: conversationId, reply: result.reply, actions: result.actions as ChatReply['actions'], ended: result.ended };
  }

  return {
    async create(ctx: WorkspaceContext, body: AgentCreate): Promise<AgentWithSecret> {
      const values = (await validate(ctx, valuesForCreate(body))) as AgentValues;
      return insert(ctx, values);
    },

    async list(ctx: WorkspaceContext, query: AgentListQuery): Promise<Page<Agent>> {
      const page = pageRequest(query);
      const rows = await repo.list(db, ctx.workspaceId, page, { name: query.name, language: query.language });
      return toPage(rows, page, (r) => r.id, presentAgent);
    },

    async get(ctx: WorkspaceContext, id: string): Promise<Agent> {
      return presentAgent(await mustFind(ctx, id));
    },

    async update(ctx: WorkspaceContext, id: string, body: AgentUpdate): Promise<Agent> {
      const current = await mustFind(ctx, id);
      const changes: Partial<AgentValues> = {};
      for (const key of ['name', 'prompt', 'first_message', 'language', 'voice', 'knowledge_base_ids', 'transfer_number', 'end_call_phrases', 'max_duration_seconds', 'turn_end_silence_ms', 'barge_in_min_ms', 'interruptible', 'silence_timeout_seconds', 'webhook_url', 'webhook_events', 'metadata'] as const) {
        if (body[key] !== undefined) (changes as Record<string, unknown>)[key] = body[key];
      }
      if (body.llm !== undefined) changes.llm = normaliseLlm(body.llm, current.llm);
      if (body.functions !== undefined) changes.functions = normaliseFunctions(body.functions);
      if (body.extraction_fields !== undefined) changes.extraction_fields = normaliseFields(body.extraction_fields);
      if (body.voicemail !== undefined) changes.voicemail = { action: body.voicemail.action, message: body.voicemail.message ?? null };
      const checked = await validate(ctx, changes, current);
      const row = await repo.update(db, ctx.workspaceId, id, checked, clock.now());
      if (!row) throw notFound('agent');
      return presentAgent(row);
    },

    async remove(ctx: WorkspaceContext, id: string): Promise<void> {
      if (!(await repo.softDelete(db, ctx.workspaceId, id, clock.now()))) throw notFound('agent');
    },

    async duplicate(ctx: WorkspaceContext, id: string, body: AgentDuplicate): Promise<AgentWithSecret> {
      const source = await mustFind(ctx, id);
      const { id: _id, workspace_id: _ws, webhook_secret: _s, previous_webhook_secret: _p, webhook_secret_rotated_at: _r, created_at: _c, updated_at: _u, deleted_at: _d, ...values } = source;
      const name = body.name ?? `${source.name} (copy)`.slice(0, 200);
      return insert(ctx, { ...values, name });
    },

    async rotateSecret(ctx: WorkspaceContext, id: string): Promise<{ webhook_secret: string }> {
      const secret = newWebhookSecret();
      const row = await repo.rotateSecret(db, ctx.workspaceId, id, secret, clock.now());
      if (!row) throw notFound('agent');
      return { webhook_secret: secret };
    },

    async testWebhook(ctx: WorkspaceContext, id: string, body: { message?: string }): Promise<{ event_id: string }> {
      const { events } = deps;
      const message = body.message ?? 'This is a test event from the Voice Agent Platform.';
      return db.transaction().execute(async (tx) => {
        const row = await repo.find(tx, ctx.workspaceId, id);
        if (!row) throw notFound('agent');
        const destination = agentDestination(row);
        if (!destination) throw invalidState('the agent has no webhook_url; set one with PATCH /v1/agents/{id}');
        const emitted = await events.emit(tx, {
          workspaceId: ctx.workspaceId,
          type: 'webhook.test',
          agentId: row.id,
          data: { message },
          agent: destination,
          agentOnly: true,
          traceParent: ctx.traceParent,
        });
        return { event_id: emitted.eventId };
      });
    },

    async testFunction(ctx: WorkspaceContext, id: string, body: FunctionTestBody): Promise<FunctionTestResult> {
      const row = await mustFind(ctx, id);
      const fn = row.functions.find((f) => f.name === body.name);
      if (!fn) {
        const known = row.functions.map((f) => f.name).join(', ') || 'none';
        throw new AppError('validation_failed', `name: the agent has no function "${body.name}"`, {
          errors: [{ path: 'name', message: `is not a function of this agent (its functions: ${known})` }],
        });
      }
      return deps.functions.call(fn, body.arguments ?? {}, { agentId: row.id, secret: row.webhook_secret });
    },

    async chat(ctx: WorkspaceContext, id: string, body: ChatBody): Promise<ChatReply> {
      return converse(ctx.workspaceId, id, body, { channel: 'api' });
    },

    converse,
  };
}

export type AgentsService = ReturnType<typeof createAgentsService>;
