// Splits extracted text into overlapping chunks of about TARGET characters, on paragraph
// boundaries first, then sentences, then words; each chunk after the first starts with the
// tail (≈ OVERLAP characters, whole sentences or words) of the previous one, so a fact that
// straddles a boundary is still found whole in one chunk.

export const CHUNK_TARGET = 800;
export const CHUNK_OVERLAP = 150;

/** Collapses runs of spaces and blank lines; paragraphs are separated by one blank line. */
export function normalizeText(text: string): string {
  return text
    .replace(/^\uFEFF/, '')
    .replace(/\r\n?/g, '\n')
    .replace(/[\t\f\v\u00a0]+/g, ' ')
    .split('\n')
    .map((line) => line.replace(/ {2,}/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

const SENTENCE_END = /(?<=[.!?。！？])\s+(?=[\p{Lu}\p{N}"'“([])|\n/u;

function splitLong(piece: string, max: number): string[] {
  if (piece.length <= max) return [piece];
  const sentences = piece.split(SENTENCE_END).map((s) => s.trim()).filter(Boolean);
  if (sentences.length > 1) return sentences.flatMap((s) => splitLong(s, max));
  // One over-long sentence: cut at word boundaries.
  const out: string[] = [];
  let current = '';
  for (const word of piece.split(/\s+/)) {
    if (word.length > max) {
      if (current) out.push(current);
      current = '';
      for (let i = 0; i < word.length; i += max) out.push(word.slice(i, i + max));
      continue;
    }
    if (current && current.length + 1 + word.length > max) {
      out.push(current);
      current = word;
    } else current = current ? `${current} ${word}` : word;
  }
  if (current) out.push(current);
  return out;
}

/** The last sentences (or words) of a chunk, at most `size` characters. */
function tailOf(text: string, size: number): string {
  if (text.length <= size) return text;
  const sentences = text.split(SENTENCE_END).map((s) => s.trim()).filter(Boolean);
  let tail = '';
  for (let i = sentences.length - 1; i >= 0; i--) {
    const next = tail ? `${sentences[i]} ${tail}` : sentences[i];
    if (next.length > size) break;
    tail = next;
  }
  if (tail) return tail;
  const words = text.split(/\s+/);
  tail = '';
  for (let i = words.length - 1; i >= 0; i--) {
    const next = tail ? `${words[i]} ${tail}` : words[i];
    if (next.length > size) break;
    tail = next;
  }
  return tail;
}

function isHeading(text: string): boolean {
  return text.length <= 100 && !text.includes('\n') && !/[.!?;:,]$/.test(text);
}

export function chunkText(text: string, options: { target?: number; overlap?: number } = {}): string[] {
  const target = options.target ?? CHUNK_TARGET;
  const overlap = options.overlap ?? CHUNK_OVERLAP;
  const normalized = normalizeText(text);
  if (!normalized) return [];
  // Units: paragraphs, with over-long ones cut into sentences/words that fit the target; pieces of
  // one paragraph are joined again with a space, paragraphs with a blank line.
  const units = normalized
    .split(/\n\n+/)
    .map((p) => p.trim())
    .filter(Boolean)
    .flatMap((p) => splitLong(p, target).map((text, i) => ({ text, separator: i === 0 ? '\n\n' : ' ' })))
    .reduce<Array<{ text: string; separator: string }>>((out, unit) => {
      // A heading (short line without final punctuation) travels with the paragraph after it.
      const previous = out[out.length - 1];
      if (previous && isHeading(previous.text) && unit.separator !== ' ' && previous.text.length + 2 + unit.text.length <= target) {
        previous.text = `${previous.text}\n\n${unit.text}`;
      } else out.push({ ...unit });
      return out;
    }, []);

  const chunks: string[] = [];
  let current = '';
  for (const unit of units) {
    const joined = current ? `${current}${unit.separator}${unit.text}` : unit.text;
    if (joined.length <= target || !current) {
      current = joined;
      continue;
    }
    chunks.push(current);
    const carry = tailOf(current, overlap);
    current = carry && carry.length + unit.separator.length + unit.text.length <= target ? `${carry}${unit.separator}${unit.text}` : unit.text;
  }
  if (current) chunks.push(current);
  return chunks;
}
