// The knowledge-base benchmark's corpus (bench/knowledge-base.bench.ts): the product's domain words
// and made-up ones drawn by a Zipf law, documents of them, and a seeded mix of queries (the fixture
// questions, common words, rare words, and both).
import { QUESTIONS } from '../../src/modules/knowledge-base/test-helpers.ts';
import { prng } from '../prng.ts';

// Words: the product's domain words first (the most frequent), then pronounceable made-up ones.
const DOMAIN = (
  'agent call caller phone number minute wallet credit balance invoice campaign contact voice prompt transfer ' +
  'recording transcript webhook function schedule widget language model speech latency quality support ticket ' +
  'customer account workspace owner admin member key secret limit rate billing payment card refund tax report ' +
  'dashboard template version publish draft test simulator monitor alert sentiment summary extraction field ' +
  'country area code carrier route queue retry hour day week month year team manager email message document ' +
  'page guide upload file passage search answer question policy privacy consent storage audio volume noise ' +
  'network packet jitter server region backup restore export import list filter status error warning timeout'
).split(' ');
const FILLER = 'the a of to and in for on with by at from is are can will may should when after before each every your our this that'.split(' ');

function vocabulary(size: number): string[] {
  const random = prng(7);
  const onsets = ['b', 'br', 'c', 'cl', 'd', 'dr', 'f', 'g', 'gr', 'h', 'j', 'k', 'l', 'm', 'n', 'p', 'pl', 'r', 's', 'st', 't', 'tr', 'v', 'z'];
  const vowels = ['a', 'e', 'i', 'o', 'u', 'ai', 'ou'];
  const codas = ['n', 'r', 'l', 'm', 'x', 'k', 'nd', 'rt', 'lt'];
  const pick = <T>(list: T[]) => list[Math.floor(random() * list.length)];
  const words = new Set(DOMAIN);
  while (words.size < size) words.add(`${pick(onsets)}${pick(vowels)}${pick(onsets)}${pick(vowels)}${pick(codas)}`);
  return [...words];
}
const WORDS = vocabulary(4000);
// Zipf (s = 1): the cumulative weights, searched by bisection.
const CUMULATIVE = (() => {
  let sum = 0;
  return WORDS.map((_, rank) => (sum += 1 / (rank + 1)));
})();
function zipfWord(random: () => number): string {
  const target = random() * CUMULATIVE[CUMULATIVE.length - 1];
  let lo = 0;
  let hi = CUMULATIVE.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (CUMULATIVE[mid] < target) lo = mid + 1;
    else hi = mid;
  }
  return WORDS[lo];
}

export function document(random: () => number, paragraphs: number): string {
  const sentence = () => {
    const words = Array.from({ length: 8 + Math.floor(random() * 12) }, () => (random() < 0.45 ? FILLER[Math.floor(random() * FILLER.length)] : zipfWord(random)));
    return `${words.join(' ').replace(/^./, (c) => c.toUpperCase())}.`;
  };
  return Array.from({ length: paragraphs }, () => Array.from({ length: 3 + Math.floor(random() * 4) }, sentence).join(' ')).join('\n\n');
}

/** 200 queries: fixture questions, common words only, a rare word among common ones, words from the whole range. */
export function queryMix(n: number): Array<{ kind: string; text: string }> {
  const random = prng(2024);
  const pick = <T>(list: T[]) => list[Math.floor(random() * list.length)];
  const common = () => WORDS[Math.floor(random() * 30)];
  const rare = () => WORDS[1000 + Math.floor(random() * (WORDS.length - 1000))];
  const kinds = ['question', 'common', 'rare', 'mixed'] as const;
  return Array.from({ length: n }, (_, i) => {
    const kind = kinds[i % kinds.length];
    if (kind === 'question') return { kind, text: pick(QUESTIONS).question };
    if (kind === 'common') return { kind, text: `how do I ${common()} the ${common()} ${common()} for my ${common()}?` };
    if (kind === 'rare') return { kind, text: `what is the ${rare()} of the ${common()} ${common()}?` };
    return { kind, text: `can the ${zipfWord(random)} ${zipfWord(random)} change my ${zipfWord(random)} ${zipfWord(random)}?` };
  });
}
