// A local stand-in for an OpenAI-compatible Chat Completions server, for tests of the openai
// adapter through the real `openai` SDK. It speaks the protocol as the real API does: JSON or
// SSE streaming (content and tool_call deltas split across chunks, `data: [DONE]`), validates
// what the real API validates (auth, tool names, tool messages answering tool calls, strict
// json_schema), and records every request so tests can assert what the SDK sent.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedToolCall {
  name: string;
  /** A JSON string as the model writes it, or an object to serialise. */
  arguments: string | Record<string, unknown>;
  id?: string;
}

export interface ScriptedReply {
  content?: string;
  tool_calls?: ScriptedToolCall[];
  /** Answers with this HTTP error instead of a completion. */
  error?: { status: number; message: string; type?: string; code?: string };
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: a request body is arbitrary JSON; tests index into it
  body: any;
}

type Responder = ScriptedReply | ((request: RecordedRequest) => ScriptedReply);

export interface FakeOpenAiServer {
  /** Base URL including `/v1`, as `baseURL` of the SDK. */
  url: string;
  requests: RecordedRequest[];
  /** Queues replies; each chat completion request takes the next one. */
  reply(...replies: Responder[]): void;
  close(): Promise<void>;
}

class BadRequest extends Error {}

function sendError(res: http.ServerResponse, status: number, message: string, type = 'invalid_request_error', code: string | null = null) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { message, type, param: null, code } }));
}

// biome-ignore lint/suspicious/noExplicitAny: validates arbitrary JSON
function validate(body: any) {
  if (typeof body?.model !== 'string' || body.model === '') throw new BadRequest("you must provide a model parameter");
  if (!Array.isArray(body.messages) || body.messages.length === 0) throw new BadRequest("'messages' must be a non-empty array");
  const roles = ['system', 'developer', 'user', 'assistant', 'tool'];
  for (let i = 0; i < body.messages.length; i++) {
    const m = body.messages[i];
    if (!roles.includes(m?.role)) throw new BadRequest(`Invalid value for 'messages[${i}].role'`);
    if (m.role === 'assistant' && Array.isArray(m.tool_calls) && m.tool_calls.length > 0) {
      const ids = m.tool_calls.map((c: { id?: string }) => c.id);
      const answered = new Set<string>();
      for (let j = i + 1; j < body.messages.length && body.messages[j].role === 'tool'; j++) answered.add(body.messages[j].tool_call_id);
      if (ids.some((id: string | undefined) => id === undefined || !answered.has(id))) {
        throw new BadRequest("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'.");
      }
    }
    if (m.role === 'tool') {
      const prev = body.messages.slice(0, i).reverse().find((p: { role: string }) => p.role !== 'tool');
      const ids = (prev?.role === 'assistant' ? (prev.tool_calls ?? []) : []).map((c: { id: string }) => c.id);
      if (!ids.includes(m.tool_call_id)) {
        throw new BadRequest(`Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.`);
      }
      if (typeof m.content !== 'string') throw new BadRequest(`Invalid type for 'messages[${i}].content'`);
    }
  }
  for (const [i, t] of (body.tools ?? []).entries()) {
    if (t?.type !== 'function' || !/^[a-zA-Z0-9_-]{1,64}$/.test(t.function?.name ?? '')) {
      throw new BadRequest(`Invalid 'tools[${i}].function.name': string does not match pattern.`);
    }
    if (t.function.parameters !== undefined && t.function.parameters?.type !== 'object') {
      throw new BadRequest(`Invalid schema for function '${t.function.name}': schema must be a JSON Schema of 'type: "object"'.`);
    }
  }
  if (body.tool_choice !== undefined && !Array.isArray(body.tools)) {
    throw new BadRequest("Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.");
  }
  const rf = body.response_format;
  if (rf?.type === 'json_schema') {
    const js = rf.json_schema;
    if (typeof js?.name !== 'string' || typeof js.schema !== 'object') throw new BadRequest("Missing required parameter: 'response_format.json_schema.name'.");
    if (js.strict === true) {
      const props = Object.keys(js.schema.properties ?? {});
      const required: string[] = js.schema.required ?? [];
      if (js.schema.additionalProperties !== false) throw new BadRequest("Invalid schema for response_format 'extraction': 'additionalProperties' is required to be supplied and to be false.");
      const missing = props.filter((p) => !required.includes(p));
      if (missing.length > 0) throw new BadRequest(`Invalid schema for response_format: 'required' is required to include every key in properties. Missing '${missing[0]}'.`);
    }
  }
}

function chunks(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** A model's pace: the first token after `firstTokenMs`, then `tokensPerSecond` (a token is a word or a piece of one). */
export interface ModelPace {
  firstTokenMs: number;
  tokensPerSecond: number;
}

/** Tokens as a model emits them: words with their leading space, long words in pieces of 5 letters. */
export function tokensOf(text: string): string[] {
  return (text.match(/\s*\S+/g) ?? []).flatMap((word) => {
    const pieces: string[] = [];
    for (let i = 0; i < word.length; i += 5) pieces.push(word.slice(i, i + 5));
    return pieces;
  });
}

function streamPaced(res: http.ServerResponse, content: string, pace: ModelPace, send: (delta: object, finish?: string | null) => void, finish: string) {
  const tokens = tokensOf(content);
  const started = performance.now();
  let index = 0;
  let timer: NodeJS.Timeout | undefined;
  res.on('close', () => clearTimeout(timer));
  const next = () => {
    if (res.destroyed) return;
    send({ content: tokens[index++] });
    if (index < tokens.length) {
      // Due times from the start, so timer lateness does not add up over a long reply.
      const due = pace.firstTokenMs + (index * 1000) / pace.tokensPerSecond;
      timer = setTimeout(next, Math.max(0, due - (performance.now() - started)));
      return;
    }
    send({}, finish);
    res.end('data: [DONE]\n\n');
  };
  timer = setTimeout(next, pace.firstTokenMs);
}

export async function startFakeOpenAi(opts: { apiKey?: string; pace?: ModelPace } = {}): Promise<FakeOpenAiServer> {
  const requests: RecordedRequest[] = [];
  const queue: Responder[] = [];

  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(parts).toString('utf8');
      let body: unknown = null;
      try {
        body = raw === '' ? null : JSON.parse(raw);
      } catch {
        return sendError(res, 400, 'We could not parse the JSON body of your request.');
      }
      const recorded: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body };
      requests.push(recorded);
      if (opts.apiKey !== undefined && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
        return sendError(res, 401, 'Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key');
      }
      if (req.method !== 'POST' || req.url?.split('?')[0] !== '/v1/chat/completions') {
        return sendError(res, 404, `Unknown request URL: ${req.method} ${req.url}.`, 'invalid_request_error', 'unknown_url');
      }
      try {
        validate(body);
      } catch (error) {
        if (error instanceof BadRequest) return sendError(res, 400, error.message);
        throw error;
      }
      const next = queue.shift();
      if (next === undefined) return sendError(res, 500, 'fake server: no scripted reply left', 'server_error');
      const scripted = typeof next === 'function' ? next(recorded) : next;
      if (scripted.error) {
        return sendError(res, scripted.error.status, scripted.error.message, scripted.error.type, scripted.error.code ?? null);
      }
      // biome-ignore lint/suspicious/noExplicitAny: request body
      const b = body as any;
      if (scripted.tool_calls?.length && b.tool_choice === 'none') {
        return sendError(res, 500, 'fake server: a tool call was scripted for a request with tool_choice "none"', 'server_error');
      }
      const id = `chatcmpl-${randomUUID().replace(/-/g, '').slice(0, 24)}`;
      const created = Math.floor(Date.now() / 1000);
      const toolCalls = (scripted.tool_calls ?? []).map((c, i) => ({
        id: c.id ?? `call_${randomUUID().replace(/-/g, '').slice(0, 20)}_${i}`,
        type: 'function' as const,
        function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments) },
      }));
      const content = scripted.content ?? null;
      const finish = toolCalls.length > 0 ? 'tool_calls' : 'stop';
      const usage = { prompt_tokens: 10 * b.messages.length, completion_tokens: (content ?? '').length, total_tokens: 10 * b.messages.length + (content ?? '').length };

      if (b.stream !== true) {
        res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': `req_${id}` });
        res.end(
          JSON.stringify({
            id,
            object: 'chat.completion',
            created,
            model: b.model,
            choices: [
              {
                index: 0,
                message: { role: 'assistant', content, refusal: null, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
                logprobs: null,
                finish_reason: finish,
              },
            ],
            usage,
          }),
        );
        return;
      }

      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
      const send = (delta: object, finish_reason: string | null = null) =>
        res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: b.model, choices: [{ index: 0, delta, logprobs: null, finish_reason }] })}\n\n`);
      send({ role: 'assistant', content: '', refusal: null });
      if (opts.pace && content) return void streamPaced(res, content, opts.pace, send, finish);
      for (const piece of chunks(content ?? '', 7)) send({ content: piece });
      toolCalls.forEach((call, index) => {
        send({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] });
        for (const piece of chunks(call.function.arguments, 5)) send({ tool_calls: [{ index, function: { arguments: piece } }] });
      });
      send({}, finish);
      if (b.stream_options?.include_usage) {
        res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: b.model, choices: [], usage })}\n\n`);
      }
      res.end('data: [DONE]\n\n');
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    reply: (...replies) => queue.push(...replies),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((e) => (e ? reject(e) : resolve()));
      }),
  };
}
