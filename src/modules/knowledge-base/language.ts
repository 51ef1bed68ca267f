// ISO 639-1 language → PostgreSQL text search configuration (the stemmer and stop words used to
// index and query a knowledge base). Every config named here ships with PostgreSQL and PGlite;
// any other language falls back to 'simple' (lower-casing, no stemming, no stop words).

const TS_CONFIGS: Record<string, string> = {
  ar: 'arabic',
  hy: 'armenian',
  eu: 'basque',
  ca: 'catalan',
  da: 'danish',
  nl: 'dutch',
  en: 'english',
  fi: 'finnish',
  fr: 'french',
  de: 'german',
  el: 'greek',
  hi: 'hindi',
  hu: 'hungarian',
  id: 'indonesian',
  ga: 'irish',
  it: 'italian',
  lt: 'lithuanian',
  ne: 'nepali',
  no: 'norwegian',
  nb: 'norwegian',
  nn: 'norwegian',
  pt: 'portuguese',
  ro: 'romanian',
  ru: 'russian',
  sr: 'serbian',
  es: 'spanish',
  sv: 'swedish',
  ta: 'tamil',
  tr: 'turkish',
  yi: 'yiddish',
};

export function tsConfigFor(language: string): string {
  return TS_CONFIGS[language.toLowerCase()] ?? 'simple';
}
