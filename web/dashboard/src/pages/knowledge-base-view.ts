import type { KnowledgeSource } from '../../../../sdks/typescript/src/index.ts';

// The knowledge-base pages' rules that need no browser: which files the platform can read, the
// checks of a new source and of a test query before they are sent, how sizes and scores read,
// and when the page keeps polling. Plain functions: unit-tested on Node
// (test/dashboard/knowledge-logic.test.ts).

/** The platform's formats (src/modules/knowledge-base/extract.ts), by extension. */
const EXTENSIONS = ['txt', 'text', 'md', 'markdown', 'html', 'htm', 'pdf', 'docx', 'csv'];
const MEDIA_TYPES = ['text/plain', 'text/markdown', 'text/x-markdown', 'text/html', 'application/xhtml+xml', 'application/pdf', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'text/csv', 'application/csv'];
/** The file input's `accept`. */
export const ACCEPTED_FILES = EXTENSIONS.map((e) => `.${e}`).join(',');
export const ACCEPTED_FILES_TEXT = 'txt, md, html, pdf, docx or csv, at most 20 MB';
export const MAX_FILE_BYTES = 20 * 1024 * 1024;

/** Why the platform would refuse this file; undefined when it may be uploaded. */
export function fileProblem(file: { name: string; size: number; type: string } | undefined): string | undefined {
  if (!file) return 'Choose a file.';
  const extension = /\.([a-z0-9]+)$/i.exec(file.name)?.[1]?.toLowerCase();
  const known = (extension !== undefined && EXTENSIONS.includes(extension)) || MEDIA_TYPES.includes(file.type.split(';')[0].trim().toLowerCase());
  if (!known) return `This kind of file cannot be read: use ${ACCEPTED_FILES_TEXT}.`;
  if (file.size === 0) return 'This file is empty.';
  if (file.size > MAX_FILE_BYTES) return `This file is ${formatBytes(file.size)}: the limit is 20 MB.`;
  return undefined;
}

export interface TextSourceDraft {
  title: string;
  text: string;
}

export function textSourceProblems(draft: TextSourceDraft): Partial<Record<keyof TextSourceDraft, string>> {
  const problems: Partial<Record<keyof TextSourceDraft, string>> = {};
  if (draft.title.trim() === '') problems.title = 'Give the text a title.';
  else if (draft.title.trim().length > 300) problems.title = 'At most 300 characters.';
  if (draft.text.trim() === '') problems.text = 'Paste or type the text.';
  return problems;
}

/** Why `raw` is not a web page address the platform could fetch; undefined when it is one. */
export function urlProblem(raw: string): string | undefined {
  const text = raw.trim();
  if (text === '') return 'Enter the address of a web page.';
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'Enter a full address, starting with https://';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'Only http and https addresses can be fetched.';
  if (text.length > 2048) return 'At most 2048 characters.';
  return undefined;
}

/** How many results a test query asks for: a whole number from 1 to 20, else undefined. */
export function topKOf(raw: string): number | undefined {
  if (!/^\s*\d+\s*$/.test(raw)) return undefined;
  const k = Number(raw);
  return k >= 1 && k <= 20 ? k : undefined;
}

/** 1536 → "1.5 KB" (powers of 1024, one decimal under 10). */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  const shown = unit === 0 || value >= 10 ? Math.round(value).toString() : value.toFixed(1).replace(/\.0$/, '');
  return `${shown} ${units[unit]}`;
}

/** A relevance score (0..1) as the page shows it: two decimals, and a bar's width in percent. */
export function scoreOf(score: number): { text: string; percent: number } {
  const bounded = Math.min(1, Math.max(0, Number.isFinite(score) ? score : 0));
  return { text: bounded.toFixed(2), percent: Math.round(bounded * 100) };
}

/** Languages of the documents (each selects its full-text stemmer; others match words as they are). */
export const KB_LANGUAGES = [
  ['en', 'English'],
  ['fr', 'French'],
  ['de', 'German'],
  ['es', 'Spanish'],
  ['it', 'Italian'],
  ['pt', 'Portuguese'],
  ['nl', 'Dutch'],
  ['sv', 'Swedish'],
  ['da', 'Danish'],
  ['nb', 'Norwegian'],
  ['fi', 'Finnish'],
  ['ru', 'Russian'],
  ['tr', 'Turkish'],
  ['ar', 'Arabic'],
  ['hi', 'Hindi'],
].map(([value, label]) => ({ value, label }));

/** The page polls while a source is still being processed. */
export const anyProcessing = (sources: Pick<KnowledgeSource, 'status'>[]) => sources.some((s) => s.status === 'processing');

/** "3 sources: 2 ready, 1 processing", announced as statuses change. */
export function sourceTally(sources: Pick<KnowledgeSource, 'status'>[]): string {
  const count = (status: KnowledgeSource['status']) => sources.filter((s) => s.status === status).length;
  const parts = [`${count('ready')} ready`];
  if (count('processing') > 0) parts.push(`${count('processing')} processing`);
  if (count('failed') > 0) parts.push(`${count('failed')} failed`);
  return `${sources.length} ${sources.length === 1 ? 'source' : 'sources'}: ${parts.join(', ')}`;
}

/** Where a source came from, in a few words. */
export function originOf(source: Pick<KnowledgeSource, 'type' | 'filename' | 'url'>): string {
  if (source.type === 'file') return source.filename ?? 'File';
  if (source.type === 'url') return source.url ?? 'Web page';
  return 'Text';
}
