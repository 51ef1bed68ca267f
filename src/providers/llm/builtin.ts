// The built-in LLM: deterministic and offline, so every feature works with no account anywhere
// and tests can script whole conversations. Rules in order: goodbye → transfer request → function
// whose name/description matches (asking for missing required arguments first) → answer from the
// best knowledge passage → the next question the prompt asks → a polite fallback.
import type { Clock } from '../../platform/clock.ts';
import { systemClock } from '../../platform/clock.ts';
import type { EngineFunction, FunctionCallResult, KnowledgePassage, LLM, LlmRespondInput, LlmTools, Turn } from '../../ports/llm.ts';
import {
  type ExtractContext,
  contextFor,
  extractFields,
  fieldKeywords,
  findBoolean,
  freeText,
  kindOf,
  type FieldLike,
  valueFrom,
} from './extract.ts';
import { hasPhrase, keywords, nameWords, normalise, sentences } from '../../platform/text.ts';

// Said anywhere, these end the call; the weak ones only in a short closing remark
// ("that's it, thanks" ends, "that's it, I want to cancel my plan" does not).
const GOODBYES = ['bye', 'goodbye', 'good bye', 'bye bye', 'bye now', 'see ya', 'talk to you later', 'have a good day', 'have a nice day',
  'have a great day', 'hang up'];
const WEAK_GOODBYES = ["that's all", 'that is all', 'that will be all', "that's it", "that's everything", 'nothing else', "i'm done",
  'all set', 'see you'];

const ANY_HUMAN = '(human|humans|real person|live person|person|people|agent|representative|rep|operator|someone|somebody|manager|supervisor|staff|receptionist|team member)';
const STRONG_HUMAN = '(human|real person|live person|representative|operator|agent|manager|supervisor)';
const ASK_HUMAN = [
  new RegExp(`\\b(speak|talk|chat|connect|transfer|put me through|get me through|reach)\\b[\\w\\s',]{0,30}?\\b${ANY_HUMAN}\\b`, 'i'),
  new RegExp(`\\b(want|need|have|give me|let me|get me)\\b[\\w\\s',]{0,20}?\\b${STRONG_HUMAN}\\b`, 'i'),
  /^\s*(an? )?(human|representative|operator|agent|real person)( please)?[.!]?\s*$/i,
];

export function isGoodbye(text: string, endCallPhrases: string[]): boolean {
  if (endCallPhrases.some((p) => p.trim() !== '' && hasPhrase(text, p))) return true;
  if (text.includes('?')) return false;
  if (GOODBYES.some((p) => hasPhrase(text, p))) return true;
  const short = text.trim().split(/\s+/).length <= 6 || /\b(thanks|thank you)\b/i.test(text);
  return short && WEAK_GOODBYES.some((p) => hasPhrase(text, p));
}

export function asksForHuman(text: string): boolean {
  const t = normalise(text);
  return ASK_HUMAN.some((re) => re.test(t));
}

function label(fn: EngineFunction): string {
  return fn.name
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/[_\-.]+/g, ' ')
    .toLowerCase()
    .trim();
}

interface SchemaProperty {
  type?: string | string[];
  description?: string;
  enum?: unknown[];
  format?: string;
}

function propertiesOf(fn: EngineFunction): { properties: Array<[string, SchemaProperty]>; required: string[] } {
  const schema = fn.parameters as { properties?: Record<string, SchemaProperty>; required?: unknown };
  const properties = Object.entries(schema?.properties ?? {});
  const required = Array.isArray(schema?.required) ? schema.required.filter((r): r is string => typeof r === 'string') : [];
  return { properties, required };
}

function fieldOf(name: string, p: SchemaProperty): FieldLike {
  const type = Array.isArray(p.type) ? (p.type.find((t) => t !== 'null') ?? 'string') : (p.type ?? 'string');
  return {
    name,
    type,
    description: p.description ?? '',
    enum: Array.isArray(p.enum) ? p.enum.map(String) : undefined,
    format: p.format,
  };
}

/** Score of a function for an utterance: name words count twice, description keywords once. */
export function functionScore(fn: EngineFunction, text: string): number {
  const said = new Set(keywords(text));
  const name = new Set(nameWords(fn.name));
  const desc = new Set(keywords(fn.description).filter((k) => !name.has(k)));
  let score = 0;
  for (const w of name) if (said.has(w)) score += 2;
  for (const w of desc) if (said.has(w)) score += 1;
  return score;
}

function matchFunction(functions: EngineFunction[], text: string, threshold = 3): EngineFunction | undefined {
  let best: { fn: EngineFunction; score: number } | undefined;
  for (const fn of functions) {
    const score = functionScore(fn, text);
    if (score >= threshold && (!best || score > best.score)) best = { fn, score };
  }
  return best?.fn;
}

/** How the agent asks for missing function arguments; the next turn continues the same request. */
const ASK_PREFIX = 'To do that, I need ';

function lastAgentTurn(history: Turn[]): string {
  for (let i = history.length - 1; i >= 0; i--) if (history[i].role === 'agent') return history[i].text;
  return '';
}

/**
 * While the agent is collecting arguments: the user texts since the original request, oldest
 * first (the request itself included), and the agent turn the request answered. Null when the
 * last agent turn was not asking for arguments.
 */
function pendingRequest(history: Turn[]): { texts: string[]; offer: string } | null {
  const texts: string[] = [];
  let asking = false;
  for (let i = history.length - 1; i >= 0; i--) {
    const turn = history[i];
    if (turn.role === 'user') {
      if (!asking) return null;
      texts.unshift(turn.text);
      asking = false;
    } else if (turn.text.startsWith(ASK_PREFIX)) asking = true;
    else return texts.length > 0 && !asking ? { texts, offer: turn.text } : null;
  }
  return texts.length > 0 && !asking ? { texts, offer: '' } : null;
}

/** The function a request names, or the one the agent offered when the caller just said yes to it. */
function requestedFunction(functions: EngineFunction[], request: string, offer: string, threshold = 3): EngineFunction | undefined {
  const acceptsOffer = offer !== '' && findBoolean(request) === true && !asksForInformation(request);
  return matchFunction(functions, request, threshold) ?? (acceptsOffer ? matchFunction(functions, offer) : undefined);
}

function argumentsFrom(fn: EngineFunction, texts: string[], ctx: ExtractContext, asked: string | undefined) {
  const { properties, required } = propertiesOf(fn);
  const args: Record<string, unknown> = {};
  for (const [name, prop] of properties) {
    const field = fieldOf(name, prop);
    const kind = kindOf(field);
    const hint = fieldKeywords(field);
    for (let i = 0; i < texts.length; i++) {
      const isLast = i === texts.length - 1;
      // Free text is taken only as the answer to the question that asked for it.
      if (kind === 'text' && !(isLast && asked === name)) continue;
      if (kind === 'boolean' && !(isLast && asked === name) && !keywords(texts[i]).some((k) => hint.includes(k))) continue;
      const value = valueFrom(field, kind, { text: texts[i], question: isLast && asked === name ? name : '' }, ctx, hint);
      if (value !== null && value !== undefined) args[name] = value;
    }
  }
  const missing = required.filter((r) => !(r in args));
  return { args, missing };
}

function question(name: string, prop: SchemaProperty | undefined): string {
  const spoken = spokenName(name).replace(/^(caller|customer|user|client)\s+/, '');
  if (Array.isArray(prop?.enum) && prop.enum.length > 1 && prop.enum.length <= 6) {
    const options = prop.enum.map((v) => spokenName(String(v)));
    return `Which ${spoken} would you like: ${options.slice(0, -1).join(', ')} or ${options[options.length - 1]}?`;
  }
  const personal = /email|phone|name|address|zip|birth/i.test(name);
  return `What is ${personal ? 'your' : 'the'} ${spoken}?`;
}

function listOf(items: string[]): string {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

function spokenName(name: string): string {
  return name
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .toLowerCase();
}

function describeResult(fn: EngineFunction, result: FunctionCallResult | { error: string }): string {
  if ('error' in result) return `I'm sorry, I couldn't ${label(fn)} right now because of a technical problem.`;
  if (result.status < 200 || result.status >= 300) return `I'm sorry, I couldn't ${label(fn)}: the system answered with an error (${result.status}).`;
  const body = result.body;
  if (typeof body === 'string' && body.trim() !== '' && body.length <= 300) return body.trim();
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const record = body as Record<string, unknown>;
    for (const key of ['message', 'summary', 'result', 'confirmation', 'status']) {
      if (typeof record[key] === 'string' && record[key] !== '') return record[key] as string;
    }
    const scalars = Object.entries(record)
      .filter(([, v]) => ['string', 'number', 'boolean'].includes(typeof v))
      .slice(0, 4)
      .map(([k, v]) => `${k.replace(/[_-]+/g, ' ')}: ${String(v)}`);
    if (scalars.length > 0) return `Done. Here are the details: ${scalars.join(', ')}.`;
  }
  return 'Done, that went through.';
}

/**
 * The sentence(s) of a passage sharing the most words with the question (at most two tied), in
 * passage order; null when the best shares too little of the question to answer it.
 */
export function bestSentences(passage: string, question: string): string | null {
  const asked = new Set(keywords(question));
  const scored = sentences(passage).map((s, index) => ({ s, index, score: new Set(keywords(s).filter((k) => asked.has(k))).size }));
  const ranked = [...scored].sort((a, b) => b.score - a.score || a.index - b.index);
  // One shared word out of several ("gift cards" vs "pay by card") is not an answer.
  if (ranked.length === 0 || ranked[0].score === 0 || (ranked[0].score < 2 && ranked[0].score / asked.size < 0.5)) return null;
  const picked = ranked.filter((r, i) => i < 2 && r.score === ranked[0].score);
  return picked
    .sort((a, b) => a.index - b.index)
    .map((r) => r.s)
    .join(' ');
}

/** Questions the agent's prompt tells it to ask, in order ("1. What is your budget?"). */
export function promptQuestions(prompt: string): string[] {
  const out: string[] = [];
  for (const line of prompt.split(/\n/)) {
    for (const m of line.matchAll(/(?:^|[.:!]\s+|^\s*(?:[-*•]|\d+[.)])\s*)([A-Z][^.?!\n]*\?)/g)) {
      const q = m[1].replace(/^\s*(?:[-*•]|\d+[.)])\s*/, '').replace(/^(?:ask|then ask|first ask)[:,]?\s*/i, '').trim();
      if (q.length > 0 && !out.includes(q)) out.push(q.charAt(0).toUpperCase() + q.slice(1));
    }
  }
  return out;
}

function alreadyAsked(question: string, history: Turn[]): boolean {
  const q = normalise(question);
  return history.some((t) => t.role === 'agent' && normalise(t.text).includes(q));
}

const LEADING_FILLER = /^(?:(?:yes|yeah|no|ok|okay|so|well|and|but|also|um|uh|hmm|great|thanks)[,.!]?\s+)+/i;

/** A question or a request for information ("tell me about ..."): what the knowledge base answers. */
export function asksForInformation(text: string): boolean {
  const t = text.trim().replace(LEADING_FILLER, '');
  return (
    t.includes('?') ||
    /^(what|when|where|why|how|who|which|whose|do|does|did|is|are|was|can|could|will|would|should|may)\b/i.test(t) ||
    /^(tell me|explain|describe)\b|\b(i want to know|i'd like to know|i was wondering|information about|info about|details about|details on)\b/i.test(t)
  );
}

/** Wh-questions ask for facts; they call a function only on a strong match. */
function isFactQuestion(text: string): boolean {
  return /^(what|when|where|why|how|who|which|whose)\b/i.test(text.trim().replace(LEADING_FILLER, ''));
}

async function answerFromKnowledge(text: string, tools: LlmTools): Promise<string | null> {
  if (keywords(text).length === 0) return null;
  const passages: KnowledgePassage[] = await tools.searchKnowledgeBase(text);
  return passages[0] ? bestSentences(passages[0].text, text) : null;
}

const OFFER_TRANSFER = 'I can connect you with a member of our team if you like.';

/**
 * A plain yes to the agent's offer ("yes please", "sure, that would be great"). An answer that
 * goes on to ask for something else ("I would like to leave a message for Dr. Chen") is that
 * request, not a yes, even though it reads as agreement.
 */
function plainYes(text: string): boolean {
  return findBoolean(text) === true && !asksForInformation(text) && keywords(text).length <= 2;
}

export function createBuiltinLlm(opts: { clock?: Clock } = {}): LLM {
  const clock = opts.clock ?? systemClock;

  async function respond(input: LlmRespondInput, tools: LlmTools): Promise<{ reply: string }> {
    const { agent, history } = input;
    const text = input.userText.trim();
    const ctx = contextFor(agent.language, clock.now());
    const previous = lastAgentTurn(history);
    if (text === '') return { reply: "Sorry, I didn't catch that. Could you say that again?" };

    if (isGoodbye(text, agent.end_call_phrases)) {
      tools.endCall('caller_goodbye');
      return { reply: 'Thank you for your time. Have a great day, goodbye!' };
    }

    if (asksForHuman(text) || (previous.includes(OFFER_TRANSFER) && plainYes(text))) {
      const transfer = tools.transferCall('caller asked for a human');
      if (transfer.ok) return { reply: "Of course. I'm transferring you to a member of our team now, please hold." };
      return { reply: "I'm sorry, I can't transfer you to a person right now, but I'm happy to help you myself. What do you need?" };
    }

    const pending = pendingRequest(history);
    let pendingFn = pending ? requestedFunction(agent.functions, pending.texts[0], pending.offer) : undefined;
    const informational = asksForInformation(text);
    if (pending && pendingFn) {
      // The caller may drop the request, or ask something else instead of answering.
      if (/\b(never ?mind|forget (it|about it)|cancel that|don't bother)\b/i.test(text)) {
        return { reply: 'No problem. Is there anything else I can help you with?' };
      }
      const before = Object.keys(argumentsFrom(pendingFn, pending.texts, ctx, undefined).args).length;
      const asked = propertiesOf(pendingFn).properties.find(([name, prop]) => previous.endsWith(question(name, prop)))?.[0];
      const now = Object.keys(argumentsFrom(pendingFn, [...pending.texts, text], ctx, asked).args).length;
      if (now === before && informational) pendingFn = undefined;
    }
    let fn = pendingFn ?? requestedFunction(agent.functions, text, previous, isFactQuestion(text) ? 4 : 3);

    const nextQuestion = promptQuestions(agent.prompt).find((q) => !alreadyAsked(q, history));
    let answer: string | null = null;
    if (!fn && informational && agent.knowledge_base_ids.length > 0) answer = await answerFromKnowledge(text, tools);
    if (!fn && !answer && informational) fn = matchFunction(agent.functions, text);

    if (fn) {
      const texts = pending && pendingFn ? [...pending.texts, text] : [text];
      const { properties } = propertiesOf(fn);
      const byName = Object.fromEntries(properties);
      const asked = pendingFn ? properties.find(([name, prop]) => previous.endsWith(question(name, prop)))?.[0] : undefined;
      const { args, missing } = argumentsFrom(fn, texts, ctx, asked);
      if (missing.length > 0) {
        return { reply: `${ASK_PREFIX}the ${listOf(missing.map(spokenName))}. ${question(missing[0], byName[missing[0]])}` };
      }
      const result = await tools.callFunction(fn.name, args);
      return { reply: describeResult(fn, result) };
    }

    if (answer) {
      // Answering a question asked instead of the prompt's question: ask that one again.
      const open = findBoolean(text) === null ? promptQuestions(agent.prompt).find((q) => previous.endsWith(q)) : undefined;
      return { reply: open ? `${answer} Coming back to my question: ${open}` : answer };
    }

    const t = normalise(text).replace(/[^a-z' ]+/g, '').trim();
    if (/^(hi|hello|hey|good (morning|afternoon|evening))( there)?$/.test(t)) {
      return { reply: nextQuestion ?? 'Hello! How can I help you today?' };
    }
    if (informational) {
      const offer = agent.transfer_number ? ` ${OFFER_TRANSFER}` : ' Is there anything else I can help you with?';
      return { reply: `I'm sorry, I don't have that information.${offer}` };
    }
    if (nextQuestion) return { reply: `Thank you. ${nextQuestion}` };
    if (/^(thanks|thank you|great|perfect|awesome|ok|okay|cool)( so much| very much)?$/.test(t)) {
      return { reply: "You're welcome! Is there anything else I can help you with?" };
    }
    const about = freeText(text);
    return { reply: `Thanks, I've noted that${about && about.length <= 80 ? `: ${about}` : ''}. Is there anything else I can help you with?` };
  }

  return {
    kind: 'builtin',
    async respond(input, tools) {
      const result = await respond(input, tools);
      input.onDelta?.(result.reply);
      return result;
    },
    async extract({ agent, fields, transcript }) {
      return extractFields(fields, transcript, contextFor(agent.language, clock.now()));
    },
  };
}

