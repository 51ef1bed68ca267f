// Small text helpers: English tokens, keywords, sentences and number words (the engine's end-call phrases, the built-in LLM), and the language code recognisers take.

const STOP_WORDS = new Set(
  (
    'a an the and or but if then else of to in on at by for with from about into over under as is are was were be been being ' +
    'am do does did done have has had having i me my mine we us our you your yours he him his she her it its they them their ' +
    'this that these those there here what which who whom whose when where why how can could would should will shall may might ' +
    'must not no yes so too very just also please thanks thank hi hello hey okay ok um uh like want wants need needs get got ' +
    'some any all each every one ones s t d ll re ve m let lets know tell give make go going im id ive dont cant its whats'
  ).split(' '),
);

/** A BCP 47 tag's language as ISO 639-1 ("en-US" → "en"), as recognisers take a language. */
export const languageCode = (bcp47: string) => bcp47.split('-')[0].toLowerCase();

export function normalise(text: string): string {
  return text
    .toLowerCase()
    .replace(/[’‘]/g, "'")
    .replace(/\s+/g, ' ')
    .trim();
}

/** Lower-case word tokens (apostrophes removed, so "what's" → "whats"). */
export function tokens(text: string): string[] {
  return normalise(text).replace(/'/g, '').match(/[a-z0-9]+/g) ?? [];
}

/** A crude stemmer: enough to match "appointments" with "appointment" and "booking" with "book". */
export function stem(word: string): string {
  let w = word;
  if (w.length > 5 && w.endsWith('ies')) w = `${w.slice(0, -3)}y`;
  else if (w.length > 4 && w.endsWith('es') && /(ss|sh|ch|x|z)es$/.test(w)) w = w.slice(0, -2);
  else if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss') && !w.endsWith('us')) w = w.slice(0, -1);
  if (w.length > 6 && w.endsWith('ing')) w = w.slice(0, -3);
  else if (w.length > 5 && w.endsWith('ed')) w = w.slice(0, -2);
  return w;
}

/** Stemmed content words, stop words removed. */
export function keywords(text: string): string[] {
  return tokens(text)
    .filter((t) => !STOP_WORDS.has(t) && t.length > 1)
    .map(stem);
}

/** Splits camelCase and snake_case names into stemmed words. */
export function nameWords(name: string): string[] {
  return keywords(name.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/[_\-.]+/g, ' '));
}

export function sentences(text: string): string[] {
  return (
    text
      .replace(/\s+/g, ' ')
      .match(/[^.!?]+(?:[.!?]+(?=\s|$)|$)/g)
      ?.map((s) => s.trim())
      .filter((s) => s.length > 0) ?? []
  );
}

/** True when `phrase` occurs in `text` as whole words (case-insensitive). */
export function hasPhrase(text: string, phrase: string): boolean {
  const p = normalise(phrase).replace(/[^a-z0-9' ]+/g, ' ').trim();
  if (p === '') return false;
  const t = ` ${normalise(text).replace(/[^a-z0-9' ]+/g, ' ').replace(/\s+/g, ' ')} `;
  return t.includes(` ${p.replace(/\s+/g, ' ')} `);
}

const UNITS: Record<string, number> = {
  zero: 0, oh: 0, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10,
  eleven: 11, twelve: 12, thirteen: 13, fourteen: 14, fifteen: 15, sixteen: 16, seventeen: 17, eighteen: 18, nineteen: 19,
  a: 1,
};
const TENS: Record<string, number> = { twenty: 20, thirty: 30, forty: 40, fifty: 50, sixty: 60, seventy: 70, eighty: 80, ninety: 90 };
const ORDINALS: Record<string, number> = {
  first: 1, second: 2, third: 3, fourth: 4, fifth: 5, sixth: 6, seventh: 7, eighth: 8, ninth: 9, tenth: 10,
  eleventh: 11, twelfth: 12, thirteenth: 13, fourteenth: 14, fifteenth: 15, sixteenth: 16, seventeenth: 17,
  eighteenth: 18, nineteenth: 19, twentieth: 20, thirtieth: 30,
};

export function ordinalWord(word: string): number | undefined {
  return ORDINALS[word];
}

/**
 * Replaces spelled-out numbers ("twenty-five", "a hundred and five", "three thousand") with digits.
 * "a" counts as one only before hundred/thousand.
 */
export function wordsToDigits(text: string): string {
  const parts = text.split(/(\s+|-)/);
  const out: string[] = [];
  let i = 0;
  while (i < parts.length) {
    const word = parts[i].toLowerCase().replace(/[^a-z]/g, '');
    const startsNumber = (word in UNITS && word !== 'a' && word !== 'oh') || word in TENS ||
      (word === 'a' && /^(hundred|thousand)$/i.test(peekWord(parts, i)));
    if (!startsNumber) {
      out.push(parts[i]);
      i++;
      continue;
    }
    let total = 0;
    let current = 0;
    let j = i;
    let lastConsumed = i;
    while (j < parts.length) {
      const raw = parts[j];
      if (/^(\s+|-)$/.test(raw)) {
        j++;
        continue;
      }
      const w = raw.toLowerCase().replace(/[^a-z]/g, '');
      if (w in UNITS && !(w === 'a' && j !== i) && !(w === 'oh' && j === i)) current += UNITS[w];
      else if (w in TENS) current += TENS[w];
      else if (w === 'hundred') current = (current || 1) * 100;
      else if (w === 'thousand') {
        total += (current || 1) * 1000;
        current = 0;
      } else if (w === 'and' && j !== i && /^(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)$/i.test(peekWord(parts, j)) && /hundred|thousand/i.test(parts.slice(i, j).join(''))) {
        // "a hundred and five"
      } else break;
      lastConsumed = j;
      j++;
      // a unit word after another unit ("one two") is a digit sequence, not a sum
      const next = peekWord(parts, lastConsumed).toLowerCase();
      if (w in UNITS && next in UNITS) break;
      if (w in TENS && next in TENS) break;
    }
    const trailing = parts[lastConsumed].match(/[^A-Za-z]+$/)?.[0] ?? '';
    out.push(String(total + current) + trailing);
    i = lastConsumed + 1;
  }
  return out.join('');
}

function peekWord(parts: string[], index: number): string {
  for (let k = index + 1; k < parts.length; k++) {
    if (!/^(\s+|-)$/.test(parts[k])) return parts[k].replace(/[^A-Za-z]/g, '');
  }
  return '';
}
