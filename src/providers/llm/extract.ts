// Deterministic value extraction for the built-in LLM: finds emails, phone numbers, numbers,
// dates, times, yes/no answers, enum values, names and free text in user utterances. Used for
// post-call extraction_fields and for the arguments of function calls. Dates and times are in
// extract-dates.ts.
import { type CountryCode, parsePhoneNumberFromString } from 'libphonenumber-js';
import type { ExtractionField, Turn } from '../../ports/llm.ts';
import { hasPhrase, keywords, nameWords, normalise, stem, wordsToDigits } from '../../platform/text.ts';
import { findDate, findTime, MONTH_RE } from './extract-dates.ts';

export interface ExtractContext {
  /** "Now" for relative dates ("tomorrow", "Friday"); dates are calendar dates in UTC. */
  now: Date;
  /** Region for national phone numbers, from the agent's language (en-US → US). */
  country: CountryCode;
  /** 3/4 means 3 April instead of March 4 (languages other than en-US). */
  dayFirst: boolean;
}

export function contextFor(language: string, now: Date): ExtractContext {
  const region = /^[a-z]{2,3}[-_]([A-Z]{2})$/i.exec(language)?.[1]?.toUpperCase() ?? 'US';
  return { now, country: region as CountryCode, dayFirst: region !== 'US' };
}

export type ValueKind = 'email' | 'phone' | 'date' | 'time' | 'number' | 'boolean' | 'enum' | 'name' | 'company' | 'id' | 'text';

export interface FieldLike {
  name: string;
  type: string;
  description: string;
  enum?: string[];
  format?: string;
}

/** What to look for, from the declared type first, then the field's name, format and description. */
export function kindOf(field: FieldLike): ValueKind {
  if (field.enum && field.enum.length > 0) return 'enum';
  if (field.type === 'boolean') return 'boolean';
  if (field.type === 'number' || field.type === 'integer') return 'number';
  const name = field.name
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .map(stem);
  const has = (...words: string[]) => words.some((w) => name.includes(w));
  const desc = normalise(field.description);
  if (field.format === 'email' || has('email', 'mail')) return 'email';
  // A "number" the caller is called back or reached on is a phone number too (callback_number: "Number to call you back on").
  if (has('phone', 'mobile', 'cell', 'tel', 'telephone', 'callback') || (has('number') && /phone|mobile|cell|\b(call|reach|text)\b/.test(desc))) return 'phone';
  if (field.format === 'date' || has('date', 'day', 'birthday', 'dob')) return 'date';
  if (field.format === 'time' || has('time', 'hour')) return 'time';
  if (has('company', 'business', 'organization', 'organisation', 'employer', 'firm')) return 'company';
  if (has('name') || /\b(full|first|last) name\b|caller'?s name|customer'?s name/.test(desc)) return 'name';
  if (has('id', 'number', 'code', 'reference', 'confirmation', 'account', 'ticket', 'zip', 'postcode')) return 'id';
  if (/\bemail\b/.test(desc)) return 'email';
  if (/\bphone\b/.test(desc)) return 'phone';
  if (/\bdate\b/.test(desc)) return 'date';
  return 'text';
}

// ---------------------------------------------------------------------------------------------
// email

const TLD = '(?:com|org|net|io|co|uk|us|de|fr|edu|gov|ai|dev|app|info|biz|me|ca|au)';

export function findEmail(text: string): string | null {
  const direct = /[a-z0-9][a-z0-9._%+-]*@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}/i.exec(text);
  if (direct) return direct[0].toLowerCase();
  // Spoken form, as speech-to-text writes it: "jane dot doe at example dot com".
  const spoken = new RegExp(
    `\\b([a-z0-9_+-]+(?:\\s+(?:dot|underscore|dash)\\s+[a-z0-9_+-]+)*)\\s+at\\s+([a-z0-9-]+(?:\\s*(?:\\.|\\bdot\\b)\\s*[a-z0-9-]+)*\\s*(?:\\.|\\bdot\\b)\\s*${TLD})\\b`,
    'i',
  ).exec(text);
  if (!spoken) return null;
  const join = (s: string) =>
    s
      .toLowerCase()
      .replace(/\s*\bdot\b\s*/g, '.')
      .replace(/\s*\bunderscore\b\s*/g, '_')
      .replace(/\s*\bdash\b\s*/g, '-')
      .replace(/\s*\.\s*/g, '.')
      .replace(/\s+/g, '');
  return `${join(spoken[1])}@${join(spoken[2])}`;
}

// ---------------------------------------------------------------------------------------------
// phone

/** Joins spoken digit sequences ("5 5 5 0 1 ...") that wordsToDigits leaves separated. */
function collapseDigits(text: string): string {
  return text.replace(/\b\d(?:[\s,.-]+\d\b)+/g, (run) => run.replace(/[\s,.-]+/g, ''));
}

export function findPhone(text: string, country: CountryCode): string | null {
  const prepared = collapseDigits(wordsToDigits(text.replace(/\bplus\b/gi, '+')));
  const candidates = prepared.match(/\+?\(?\d[\d\s().-]{5,}\d/g) ?? [];
  for (const candidate of candidates) {
    if (/^\d{4}-\d{2}-\d{2}$/.test(candidate.trim())) continue;
    const digits = candidate.replace(/\D/g, '');
    if (digits.length < 7 || digits.length > 15) continue;
    const parsed = parsePhoneNumberFromString(candidate.trim(), country);
    if (parsed?.isPossible()) return parsed.number;
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// numbers

/** The numbers in a text, skipping those inside emails, phone numbers, dates and times. */
export function findNumbers(text: string, ctx: ExtractContext): number[] {
  let t = wordsToDigits(normalise(text));
  t = t.replace(/[a-z0-9._%+-]+@[a-z0-9.-]+/g, ' ');
  t = t.replace(/\b\d{4}-\d{1,2}-\d{1,2}\b/g, ' ');
  t = t.replace(/\b\d{1,2}:\d{2}\b|\b\d{1,2}\s*[ap]\.?m\b\.?/g, ' ');
  t = t.replace(new RegExp(`\\b${MONTH_RE}\\s+\\d{1,2}(st|nd|rd|th)?\\b|\\b\\d{1,2}(st|nd|rd|th)?\\s+(of\\s+)?${MONTH_RE}\\b`, 'g'), ' ');
  t = t.replace(/\b\d{1,2}(st|nd|rd|th)\b/g, ' ');
  const phone = findPhone(t, ctx.country);
  if (phone) t = t.replace(/\+?\(?\d[\d\s().-]{5,}\d/g, (s) => (s.replace(/\D/g, '').length >= 7 ? ' ' : s));
  const out: number[] = [];
  for (const m of t.matchAll(/(^|[^\w.])(-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|-?\d+(?:\.\d+)?)(k\b)?/g)) {
    let value = Number(m[2].replace(/,/g, ''));
    if (m[3]) value *= 1000;
    if (Number.isFinite(value)) out.push(value);
  }
  return out;
}

export function findNumber(text: string, ctx: ExtractContext, hint: string[] = []): number | null {
  const numbers = findNumbers(text, ctx);
  if (numbers.length <= 1 || hint.length === 0) return numbers[0] ?? null;
  // Several numbers: take the one in the clause that names the field ("3 kids and a budget of 500").
  for (const clause of text.split(/,|;|\band\b|\bbut\b/i)) {
    if (keywords(clause).some((k) => hint.includes(k))) {
      const n = findNumbers(clause, ctx);
      if (n.length > 0) return n[0];
    }
  }
  return numbers[0];
}

// ---------------------------------------------------------------------------------------------
// yes / no

const YES_PHRASES = ['yes', 'yeah', 'yep', 'yup', 'ya', 'yea', 'sure', 'absolutely', 'definitely', 'certainly', 'of course', 'correct',
  "that's right", 'that is right', 'right', 'affirmative', 'ok', 'okay', 'i do', 'i am', 'i would', 'i will', 'please do', 'sounds good',
  'go ahead', 'no problem', 'no worries', 'why not', 'totally', 'indeed', 'yes please', 'i have', 'we do', 'we are', 'we would'];
const NO_PHRASES = ['no', 'nope', 'nah', 'not', 'never', 'negative', "don't", 'do not', "doesn't", "didn't", "isn't", "aren't", "wasn't",
  "won't", "wouldn't", "haven't", "i'm good", 'no thanks', 'no thank you', 'not really', 'not interested', 'pass', 'rather not', 'none'];

export function findBoolean(text: string): boolean | null {
  const t = normalise(text).replace(/[^a-z' ]+/g, ' ').replace(/\s+/g, ' ').trim();
  const first = (phrases: string[]) => phrases.some((p) => t === p || t.startsWith(`${p} `));
  // "no problem" and "why not" start with a negative word but agree.
  if (first(['no problem', 'no worries', 'why not', 'not a problem'])) return true;
  if (first(NO_PHRASES.filter((p) => !p.includes(' ') || p.startsWith('no')))) return false;
  if (first(YES_PHRASES)) {
    // "yes, but not interested" stays yes when it opens with yes; the caller's first word decides.
    return true;
  }
  if (NO_PHRASES.some((p) => hasPhrase(t, p)) || /n't\b/.test(t)) return false;
  if (YES_PHRASES.some((p) => hasPhrase(t, p)) || /\b(love|like) (to|that|it)\b|\binterested\b|\bplease\b/.test(t)) return true;
  return null;
}

// ---------------------------------------------------------------------------------------------
// enum

const ENUM_SYNONYMS: Record<string, string[]> = {
  yes: ['yeah', 'yep', 'sure', 'absolutely'],
  no: ['nope', 'nah', 'not really'],
  high: ['urgent', 'asap', 'as soon as possible', 'critical', 'emergency', 'important', 'right away', 'immediately'],
  medium: ['moderate', 'normal', 'soonish', 'this week', 'fairly'],
  low: ['not urgent', 'no rush', 'whenever', 'not a priority', 'eventually'],
  hot: ['very interested', 'ready to buy', 'ready to sign', 'ready to go', 'right away', 'asap', 'this week', 'immediately'],
  warm: ['somewhat interested', 'maybe', 'considering', 'thinking about it', 'in a few months', 'next quarter', 'possibly'],
  cold: ['not interested', 'no interest', 'just browsing', 'just looking', 'no budget', 'not now'],
  positive: ['happy', 'great', 'good', 'pleased', 'love', 'excellent', 'satisfied'],
  negative: ['unhappy', 'bad', 'angry', 'upset', 'frustrated', 'terrible', 'awful', 'disappointed'],
  neutral: ['okay', 'fine', 'so so', 'alright', 'average', 'meh'],
  very_satisfied: ['extremely satisfied', 'very happy', 'love it', 'loved it', 'excellent', 'amazing', 'fantastic', 'perfect'],
  satisfied: ['happy', 'good', 'pleased', 'pretty good'],
  dissatisfied: ['unhappy', 'not happy', 'not satisfied', 'disappointed', 'not great', 'unsatisfied'],
  very_dissatisfied: ['very unhappy', 'terrible', 'awful', 'horrible', 'very disappointed', 'worst'],
  email: ['e-mail', 'mail', 'inbox'],
  phone: ['call', 'telephone', 'ring', 'phone call'],
  sms: ['text', 'text message', 'texting', 'message'],
  text: ['sms', 'text message', 'texting'],
  morning: ['am', 'before noon', 'early'],
  afternoon: ['after lunch', 'pm', 'midday'],
  evening: ['tonight', 'after work', 'late'],
  billing: ['bill', 'invoice', 'charge', 'charged', 'payment', 'refund', 'overcharged'],
  technical: ['tech', 'not working', 'broken', 'error', 'bug', 'crash', 'crashes', "doesn't work", 'outage', 'down'],
  sales: ['buy', 'pricing', 'price', 'purchase', 'quote', 'upgrade'],
  account: ['login', 'log in', 'password', 'sign in', 'locked out', 'username'],
  new: ['first time', 'never been', 'new patient', 'new customer'],
  existing: ['returning', 'been here before', 'existing customer', 'already a customer', 'current customer', 'regular'],
};

function spokenForm(value: string): string {
  return normalise(value).replace(/[_-]+/g, ' ').trim();
}

export function findEnum(text: string, values: string[]): string | null {
  const t = ` ${wordsToDigits(normalise(text)).replace(/[^a-z0-9' ]+/g, ' ').replace(/\s+/g, ' ')} `;
  let best: { value: string; length: number; at: number } | null = null;
  for (const value of values) {
    const key = spokenForm(value).replace(/ /g, '_');
    const phrases = [spokenForm(value), ...(ENUM_SYNONYMS[key] ?? []).map(spokenForm)];
    for (const phrase of phrases) {
      const forms = [phrase, `${phrase}s`, phrase.replace(/s$/, '')].filter((f) => f.length > 0);
      for (const form of forms) {
        const at = t.indexOf(` ${form} `);
        if (at < 0) continue;
        // "not satisfied" is not "satisfied": a negated plain match does not count.
        const before = t.slice(Math.max(0, at - 16), at);
        if (!form.startsWith('not ') && /(\bnot|\bnever|n't|\bno)\s*(very|really|that|too)?\s*$/.test(before)) {
          // "wasn't satisfied" is "dissatisfied" when the enum has such a value.
          const opposite = values.find((v) => ['dis', 'un', 'not ', 'not_', 'in'].some((p) => spokenForm(v) === `${p}${spokenForm(value)}`.replace('_', ' ')));
          if (opposite && (!best || form.length + 4 > best.length)) best = { value: opposite, length: form.length + 4, at };
          continue;
        }
        if (!best || form.length > best.length || (form.length === best.length && at < best.at)) {
          best = { value, length: form.length, at };
        }
      }
    }
  }
  return best?.value ?? null;
}

// ---------------------------------------------------------------------------------------------
// names, companies, identifiers, free text

const NOT_A_NAME = new Set(['calling', 'looking', 'interested', 'not', 'just', 'here', 'good', 'fine', 'okay', 'ok', 'sorry', 'trying',
  'wondering', 'a', 'an', 'the', 'very', 'so', 'really', 'glad', 'happy', 'sure', 'in', 'on', 'at', 'with', 'from', 'still', 'also',
  'afraid', 'able', 'going', 'doing', 'having', 'ready', 'available', 'busy', 'back', 'done', 'new', 'existing', 'yes', 'no',
  'about', 'later', 'tomorrow', 'today', 'tonight', 'anytime', 'whenever', 'soon', 'now', 'if', 'when', 'please', 'maybe', 'again', 'after', 'before']);

function titleCase(words: string[]): string {
  return words.map((w) => w.charAt(0).toUpperCase() + w.slice(1).toLowerCase()).join(' ');
}

export function findName(text: string, askedForName = false): string | null {
  const patterns: Array<[RegExp, boolean]> = [
    [/\bmy name is ([a-z][a-z'-]*(?:\s+[a-z][a-z'-]*){0,2})/i, true],
    [/\bname'?s ([a-z][a-z'-]*(?:\s+[a-z][a-z'-]*){0,2})/i, true],
    [/\bcall me ([a-z][a-z'-]*)/i, true],
    [/\b(?:[Tt]his is|[Ii]t's|[Ii]t is|I'm|I am|[Ii]m) ([A-Z][a-z'-]+(?:\s+[A-Z][a-z'-]+){0,2})/, false],
  ];
  for (const [re, anyCase] of patterns) {
    const m = re.exec(text.replace(/[’]/g, "'"));
    if (!m) continue;
    const words: string[] = [];
    for (const w of m[1].split(/\s+/)) {
      if (NOT_A_NAME.has(w.toLowerCase()) || /^(and|but|from|calling|with|here|i|im|i'm)$/i.test(w)) break;
      if (!anyCase && !/^[A-Z]/.test(w)) break;
      words.push(w);
    }
    if (words.length > 0) return titleCase(words);
  }
  if (askedForName) {
    const bare = text.trim().replace(/[.!]+$/, '').replace(/^(it's|it is|sure|yes|yeah)[, ]+/i, '');
    if (/^[a-z][a-z'-]+(?:\s+[a-z][a-z'-]+){0,2}$/i.test(bare) && !bare.split(/\s+/).some((w) => NOT_A_NAME.has(w.toLowerCase()))) {
      return titleCase(bare.split(/\s+/));
    }
  }
  return null;
}

export function findCompany(text: string): string | null {
  const m =
    /\b(?:company|business|firm|organi[sz]ation)(?: name)? is(?: called)? ([A-Za-z0-9&'.-]+(?:\s+[A-Za-z0-9&'.-]+){0,4})/i.exec(text) ??
    /\b(?:[Ii] work (?:at|for)|[Ii]'m with|[Ii] am with|[Ii]'m from|[Ii] am from|[Cc]alling from|[Ww]e are|[Ww]e're|[Ii] run|[Ii] own) ([A-Z0-9][A-Za-z0-9&'.-]*(?:\s+[A-Z0-9&][A-Za-z0-9&'.-]*){0,4})/.exec(text);
  if (!m) return null;
  const name = m[1].replace(/\s+(and|but|where|which|in|we|i)\b.*$/i, '').replace(/[.,!?]+$/, '');
  return name.length > 0 ? name : null;
}

export function findId(text: string): string | null {
  const t = collapseDigits(wordsToDigits(text));
  const m = /\b(?:[A-Z]{1,4}-?)?\d{3,}(?:-?[A-Z0-9]+)*\b/i.exec(t);
  return m ? m[0].toUpperCase() : null;
}

const LEAD_INS = /^(?:(?:hi|hello|hey|yes|yeah|so|well|um|uh|okay|ok)[,.!]?\s+)*(?:i'm calling (?:about|because|regarding|to)|i am calling (?:about|because|regarding|to)|calling (?:about|because|regarding)|it's about|it is about|i need help with|i need|i want to|i'd like to|i would like to|i have a question about|i have a problem with|i have an issue with|i'm having (?:a problem|an issue|trouble) with|the reason is|regarding)\s+/i;

export function freeText(text: string): string {
  return text
    .trim()
    .replace(LEAD_INS, '')
    .replace(/[.!]+$/, '')
    .trim();
}

// ---------------------------------------------------------------------------------------------
// orchestration

export interface Utterance {
  text: string;
  /** The agent turn just before it (the question it answers), if any. */
  question: string;
}

const GENERIC = new Set(['caller', 'user', 'customer', 'person', 'whether', 'field', 'value', 'provided', 'given', 'mentioned', 'contact', 'prefer', 'preferred']);

export function fieldKeywords(field: FieldLike): string[] {
  return [...new Set([...nameWords(field.name), ...keywords(field.description)])].filter((k) => !GENERIC.has(k));
}

function relevance(hint: string[], u: Utterance): number {
  const own = keywords(u.text).filter((k) => hint.includes(k)).length;
  const asked = keywords(u.question).filter((k) => hint.includes(k)).length;
  return own * 2 + asked * 3;
}

/** One value of the field's kind from one utterance, or null. */
export function valueFrom(field: FieldLike, kind: ValueKind, u: Utterance, ctx: ExtractContext, hint: string[]): unknown {
  switch (kind) {
    case 'email':
      return findEmail(u.text);
    case 'phone':
      return findPhone(u.text, ctx.country);
    case 'date':
      return findDate(u.text, ctx);
    case 'time':
      return findTime(u.text);
    case 'number': {
      const n = findNumber(u.text, ctx, hint);
      return n === null ? null : field.type === 'integer' ? Math.round(n) : n;
    }
    case 'boolean':
      return findBoolean(u.text);
    case 'enum':
      return findEnum(u.text, field.enum ?? []);
    case 'name':
      return findName(u.text, /\bname\b/i.test(u.question));
    case 'company':
      return findCompany(u.text) ?? (/\b(company|business|organi[sz]ation|work for)\b/i.test(u.question) ? freeText(u.text) || null : null);
    case 'id':
      return findId(u.text);
    case 'text': {
      const text = freeText(u.text);
      return text.length > 0 ? text : null;
    }
  }
}

/**
 * The value of one field over a conversation's user utterances: the latest utterance holding a
 * value wins, preferring those that name the field or answer a question about it (emails and phone
 * numbers need no such hint), so a correction replaces the first answer. Yes/no and free text
 * need a relevant utterance.
 */
export function extractOne(field: FieldLike, utterances: Utterance[], ctx: ExtractContext): unknown {
  const kind = kindOf(field);
  const hint = fieldKeywords(field);
  let best: { value: unknown; score: number } | null = null;
  for (const u of utterances) {
    const value = valueFrom(field, kind, u, ctx, hint);
    if (value === null || value === undefined) continue;
    const related = relevance(hint, u) > 0;
    if ((kind === 'boolean' || kind === 'text') && !related) continue;
    // An email or phone number is unmistakable: the latest one is the caller's final answer.
    const score = kind === 'email' || kind === 'phone' || !related ? 0 : 1;
    if (!best || score >= best.score) best = { value, score };
  }
  if (best) return best.value;
  if (kind === 'text' && /\b(reason|purpose|why|issue|problem|request|inquiry|enquiry|summary|topic)\b/i.test(`${field.name} ${field.description}`)) {
    // The reason for a call is what the caller says first.
    const first = utterances.find((u) => freeText(u.text).split(/\s+/).length >= 3);
    return first ? freeText(first.text) : null;
  }
  return null;
}

export function utterancesOf(transcript: Turn[]): Utterance[] {
  const out: Utterance[] = [];
  let question = '';
  for (const turn of transcript) {
    if (turn.role === 'agent') question = turn.text;
    else {
      out.push({ text: turn.text, question });
      question = '';
    }
  }
  return out;
}

export function extractFields(fields: ExtractionField[], transcript: Turn[], ctx: ExtractContext): Record<string, unknown> {
  const utterances = utterancesOf(transcript);
  const out: Record<string, unknown> = {};
  for (const field of fields) out[field.name] = extractOne(field, utterances, ctx);
  return out;
}

