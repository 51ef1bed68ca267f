import { type CpuPool, cpuTask } from '../../platform/cpu-pool.ts';
import type { EspeakSpeech } from './espeak.ts';
import type { SynthesizedAudio, SynthesizeOptions, TtsDescription, TtsProvider, VoiceInfo } from '../../ports/tts.ts';
import type * as worker from './worker.ts';

// The built-in, offline text-to-speech engine: a small formant synthesiser. Letters become rough
// phones (vowels and sonorants: a glottal pulse train through three formant resonators; fricatives
// and bursts: shaped noise), words are separated by short pauses and punctuation by longer ones,
// and the pitch falls over a sentence (rises on a question). It is not intelligible speech, but
// it is real audio that sounds like talking, whose length follows the text, and that differs per
// voice (pitch, speaking rate, vocal-tract length). Output is deterministic: the same text and
// voice always give the same samples. When the `espeak-ng` program is installed, createBuiltinTts
// given an EspeakSpeech (espeak.ts) speaks the same voices through it instead, intelligibly.

export const BUILTIN_SAMPLE_RATE = 16_000;

interface VoiceParams {
  /** Mean pitch in Hz. */
  f0: number;
  /** Speaking rate; 1 is about 12 letters per second. */
  rate: number;
  /** Formant scale: shorter vocal tracts (higher) sound younger or female. */
  formantScale: number;
  /** 0..1 noise mixed into voiced sounds. */
  breathiness: number;
}

interface BuiltinVoice extends VoiceInfo {
  params: VoiceParams;
}

const voice = (name: string, language: string, gender: VoiceInfo['gender'], description: string, params: VoiceParams): BuiltinVoice => ({
  id: `builtin-${name.toLowerCase()}`,
  name,
  language,
  gender,
  provider: 'builtin',
  description,
  params,
});

export const BUILTIN_VOICES: readonly BuiltinVoice[] = [
  voice('Ava', 'en-US', 'female', 'Warm, friendly, medium pace', { f0: 205, rate: 1.0, formantScale: 1.17, breathiness: 0.08 }),
  voice('Ben', 'en-US', 'male', 'Calm and clear, slightly slow', { f0: 112, rate: 0.92, formantScale: 1.0, breathiness: 0.05 }),
  voice('Cora', 'en-GB', 'female', 'Bright and brisk', { f0: 225, rate: 1.1, formantScale: 1.2, breathiness: 0.1 }),
  voice('Dev', 'en-IN', 'male', 'Energetic, quick', { f0: 128, rate: 1.15, formantScale: 1.04, breathiness: 0.04 }),
  voice('Elena', 'es-ES', 'female', 'Soft and expressive', { f0: 195, rate: 1.05, formantScale: 1.15, breathiness: 0.14 }),
  voice('Felix', 'de-DE', 'male', 'Deep and measured', { f0: 98, rate: 0.88, formantScale: 0.95, breathiness: 0.03 }),
  voice('Juliette', 'fr-FR', 'female', 'Light and lively', { f0: 232, rate: 1.08, formantScale: 1.22, breathiness: 0.12 }),
  voice('Sam', 'en-US', 'neutral', 'Neutral, even tone', { f0: 160, rate: 1.0, formantScale: 1.08, breathiness: 0.06 }),
];

// --- synthesis -------------------------------------------------------------------------------

type Phone =
  | { kind: 'vowel' | 'sonorant'; formants: [number, number, number]; ms: number; gain: number }
  | { kind: 'fricative'; centre: number; bandwidth: number; ms: number; gain: number; voiced: boolean }
  | { kind: 'stop'; centre: number; ms: number; voiced: boolean }
  | { kind: 'pause'; ms: number; end?: 'comma' | 'period' | 'question' };

const VOWELS: Record<string, [number, number, number]> = {
  a: [730, 1090, 2440],
  e: [530, 1840, 2480],
  i: [300, 2200, 2960],
  o: [570, 840, 2410],
  u: [320, 900, 2240],
  y: [290, 2100, 2700],
  á: [730, 1090, 2440],
  à: [730, 1090, 2440],
  â: [730, 1090, 2440],
  ä: [660, 1700, 2400],
  é: [480, 1950, 2600],
  è: [560, 1800, 2500],
  ê: [560, 1800, 2500],
  í: [300, 2200, 2960],
  ó: [570, 840, 2410],
  ô: [500, 900, 2400],
  ö: [460, 1400, 2300],
  ú: [320, 900, 2240],
  ü: [300, 1600, 2200],
};

function phoneOf(ch: string): Phone | null {
  const v = VOWELS[ch];
  if (v) return { kind: 'vowel', formants: v, ms: 95, gain: 1 };
  switch (ch) {
    case 'm':
      return { kind: 'sonorant', formants: [250, 1100, 2200], ms: 65, gain: 0.55 };
    case 'n':
    case 'ñ':
      return { kind: 'sonorant', formants: [260, 1500, 2500], ms: 60, gain: 0.55 };
    case 'l':
      return { kind: 'sonorant', formants: [360, 1300, 2700], ms: 60, gain: 0.7 };
    case 'r':
      return { kind: 'sonorant', formants: [420, 1250, 1600], ms: 55, gain: 0.65 };
    case 'w':
      return { kind: 'sonorant', formants: [300, 700, 2200], ms: 55, gain: 0.7 };
    case 'j':
      return { kind: 'fricative', centre: 2800, bandwidth: 1400, ms: 70, gain: 0.35, voiced: true };
    case 's':
    case 'c':
    case 'ß':
      return { kind: 'fricative', centre: 5200, bandwidth: 1800, ms: 85, gain: 0.45, voiced: false };
    case 'z':
      return { kind: 'fricative', centre: 4800, bandwidth: 1800, ms: 75, gain: 0.35, voiced: true };
    case 'f':
      return { kind: 'fricative', centre: 3500, bandwidth: 3000, ms: 80, gain: 0.3, voiced: false };
    case 'v':
      return { kind: 'fricative', centre: 3000, bandwidth: 2600, ms: 65, gain: 0.25, voiced: true };
    case 'h':
      return { kind: 'fricative', centre: 1500, bandwidth: 2500, ms: 55, gain: 0.2, voiced: false };
    case 'x':
      return { kind: 'fricative', centre: 4200, bandwidth: 2400, ms: 95, gain: 0.4, voiced: false };
    case 'p':
    case 't':
    case 'k':
    case 'q':
      return { kind: 'stop', centre: ch === 'p' ? 1200 : ch === 't' ? 4000 : 2200, ms: 70, voiced: false };
    case 'b':
    case 'd':
    case 'g':
      return { kind: 'stop', centre: ch === 'b' ? 900 : ch === 'd' ? 3200 : 1900, ms: 60, voiced: true };
    case 'ç':
      return { kind: 'fricative', centre: 5000, bandwidth: 1800, ms: 85, gain: 0.45, voiced: false };
    default:
      return /\p{L}|\p{N}/u.test(ch) ? { kind: 'vowel', formants: [500, 1500, 2500], ms: 90, gain: 0.9 } : null;
  }
}

const DIGIT_WORDS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];

/** Text → phones: letters to rough phones, digits spelled, pauses between words and at punctuation. */
export function phonesOf(text: string): Phone[] {
  const phones: Phone[] = [];
  const normalized = text.toLowerCase().replace(/\d/g, (d) => ` ${DIGIT_WORDS[Number(d)]} `);
  let previous = '';
  for (const ch of normalized) {
    if (/\s/.test(ch)) {
      if (phones.length > 0 && phones[phones.length - 1].kind !== 'pause') phones.push({ kind: 'pause', ms: 70 });
      previous = '';
      continue;
    }
    if (/[,;:—–-]/.test(ch)) {
      phones.push({ kind: 'pause', ms: 200, end: 'comma' });
      previous = '';
      continue;
    }
    if (/[.!…]/.test(ch)) {
      phones.push({ kind: 'pause', ms: 380, end: 'period' });
      previous = '';
      continue;
    }
    if (ch === '?') {
      phones.push({ kind: 'pause', ms: 380, end: 'question' });
      previous = '';
      continue;
    }
    if (ch === previous) continue; // doubled letters are one sound
    previous = ch;
    const phone = phoneOf(ch);
    if (phone) phones.push(phone);
  }
  return phones;
}

/** Two-pole resonator (Klatt): unity gain at DC-normalised centre frequency. */
class Resonator {
  private y1 = 0;
  private y2 = 0;
  private a = 0;
  private b = 0;
  private c = 0;

  set(frequency: number, bandwidth: number, sampleRate: number) {
    const t = 1 / sampleRate;
    this.c = -Math.exp(-2 * Math.PI * bandwidth * t);
    this.b = 2 * Math.exp(-Math.PI * bandwidth * t) * Math.cos(2 * Math.PI * Math.min(frequency, sampleRate * 0.45) * t);
    this.a = 1 - this.b - this.c;
  }

  step(x: number): number {
    const y = this.a * x + this.b * this.y1 + this.c * this.y2;
    this.y2 = this.y1;
    this.y1 = y;
    return y;
  }
}

/** Deterministic noise (mulberry32) so the same text always gives the same audio. */
function noiseSource(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1;
  };
}

function hash(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

/** Speaks `text` with the given voice parameters: mono PCM16 at `sampleRate`. */
export function synthesizeWith(text: string, params: VoiceParams, sampleRate = BUILTIN_SAMPLE_RATE): Int16Array {
  const phones = phonesOf(text);
  const msToSamples = (ms: number) => Math.max(1, Math.round(((ms / params.rate) * sampleRate) / 1000));
  const total = phones.reduce((sum, p) => sum + msToSamples(p.ms), 0) + msToSamples(120);
  const out = new Float32Array(total);
  const noise = noiseSource(hash(text) ^ Math.round(params.f0 * 1000));
  const formants = [new Resonator(), new Resonator(), new Resonator()];
  const bandwidths = [90, 110, 170];
  const fricative = new Resonator();
  let current: [number, number, number] = [500, 1500, 2500];
  let phase = 0;
  let cursor = 0;
  let amplitude = 0;

  // Sentence-level pitch: declines through each sentence, rises at the end of a question.
  const sentenceEnds: number[] = [];
  {
    let at = 0;
    for (const p of phones) {
      at += msToSamples(p.ms);
      if (p.kind === 'pause' && (p.end === 'period' || p.end === 'question')) sentenceEnds.push(at);
    }
    sentenceEnds.push(total);
  }
  const questionAt = new Set<number>();
  {
    let at = 0;
    for (const p of phones) {
      at += msToSamples(p.ms);
      if (p.kind === 'pause' && p.end === 'question') questionAt.add(at);
    }
  }
  let sentenceStart = 0;
  let sentenceIndex = 0;

  for (const phone of phones) {
    const length = msToSamples(phone.ms);
    while (sentenceIndex < sentenceEnds.length - 1 && cursor >= sentenceEnds[sentenceIndex]) {
      sentenceStart = sentenceEnds[sentenceIndex];
      sentenceIndex++;
    }
    const sentenceEnd = sentenceEnds[sentenceIndex];
    const rising = questionAt.has(sentenceEnd);
    const target = phone.kind === 'vowel' || phone.kind === 'sonorant' ? phone.formants.map((f) => f * params.formantScale) : current;
    const from = current;
    for (let i = 0; i < length; i++) {
      const n = cursor + i;
      const progress = (n - sentenceStart) / Math.max(1, sentenceEnd - sentenceStart);
      const contour = rising ? 1 - 0.12 * progress + 0.45 * Math.max(0, progress - 0.75) * 4 : 1.08 - 0.22 * progress;
      const f0 = params.f0 * contour * (1 + 0.03 * Math.sin((2 * Math.PI * n) / (sampleRate * 0.23)));
      phase += f0 / sampleRate;
      if (phase >= 1) phase -= 1;
      // Glottal pulse: a rising ramp and a quick fall (Rosenberg-like), zero mean.
      const glottal = phase < 0.6 ? Math.sin((Math.PI * phase) / 1.2) ** 2 : Math.cos((Math.PI * (phase - 0.6)) / 0.8) ** 2;
      const source = glottal - 0.37 + params.breathiness * noise();
      // Amplitude envelope: 12 ms ramps so phones join without clicks.
      const ramp = Math.min(1, i / (sampleRate * 0.012), (length - i) / (sampleRate * 0.012));
      let sample = 0;
      if (phone.kind === 'vowel' || phone.kind === 'sonorant') {
        const blend = Math.min(1, i / (sampleRate * 0.03));
        if (i % 16 === 0) {
          for (let k = 0; k < 3; k++) formants[k].set(from[k] + (target[k] - from[k]) * blend, bandwidths[k], sampleRate);
        }
        let y = 0;
        for (let k = 0; k < 3; k++) y += formants[k].step(source) * [1, 0.6, 0.3][k];
        amplitude += (phone.gain - amplitude) * 0.01;
        sample = y * amplitude * 0.9;
      } else if (phone.kind === 'fricative') {
        if (i === 0) fricative.set(phone.centre, phone.bandwidth, sampleRate);
        const hiss = fricative.step(noise()) * phone.gain * 2.2 * ramp;
        let voicing = 0;
        if (phone.voiced) voicing = formants[0].step(source) * 0.35 * ramp;
        amplitude *= 0.995;
        sample = hiss + voicing;
      } else if (phone.kind === 'stop') {
        // Closure (silence, or a low voice bar), then a short burst.
        const closure = Math.round(length * 0.6);
        if (i === closure) fricative.set(phone.centre, 1500, sampleRate);
        if (i < closure) sample = phone.voiced ? formants[0].step(source) * 0.12 : 0;
        else sample = fricative.step(noise()) * 1.6 * Math.exp(-(i - closure) / (sampleRate * 0.008));
        amplitude *= 0.99;
      } else {
        amplitude *= 0.995;
        sample = 0;
      }
      out[n] = sample;
    }
    current = target as [number, number, number];
    cursor += length;
  }

  // Normalise to a fixed peak so every voice plays at the same loudness.
  let peak = 0;
  for (const s of out) peak = Math.max(peak, Math.abs(s));
  const scale = peak > 0 ? (0.7 * 32767) / peak : 0;
  const pcm = new Int16Array(total);
  for (let i = 0; i < total; i++) pcm[i] = Math.max(-32768, Math.min(32767, Math.round(out[i] * scale)));
  return pcm;
}

const synthesizeTask = cpuTask<typeof worker.synthesizeBuiltin>(new URL('./worker.ts', import.meta.url), 'synthesizeBuiltin');

/** What speaks the built-in voices: the espeak-ng program, or this file's formant synthesiser. */
export type BuiltinEngine = TtsDescription['builtin_engine'];

export interface BuiltinTts extends TtsProvider {
  /** The engine in use (detects espeak-ng on the first call), for the health route and the start-up log. */
  engine(): Promise<BuiltinEngine>;
}

export interface BuiltinTtsOptions {
  /** The app's pool: formant synthesis runs in its worker threads. */
  cpu?: CpuPool;
  /** espeak-ng (createEspeakSpeech): used when its program answers, else the formant synthesiser. */
  espeak?: EspeakSpeech;
  /** Told when an espeak-ng run fails and that text is spoken by the formant synthesiser instead. */
  onEspeakError?: (error: Error) => void;
}

/**
 * The built-in engine. With `cpu` (the app's pool) formant synthesis runs in a worker thread: a
 * 300-letter text is about half a second of CPU, which on the event loop would stall every other
 * request. A live call's speech (runtime-speech.ts) asks for the `live` lane, so a busy pool makes
 * it wait rather than refuse it; a voice preview keeps the default `request` lane. espeak-ng runs
 * in its own process, so it needs no pool.
 */
export function createBuiltinTts(options: BuiltinTtsOptions = {}): BuiltinTts {
  const byId = new Map(BUILTIN_VOICES.map((v) => [v.id, v]));
  const { espeak } = options;
  const engine = async (): Promise<BuiltinEngine> => (espeak && (await espeak.detect()) ? 'espeak-ng' : 'formant');
  const formant = async (text: string, found: BuiltinVoice, lane: SynthesizeOptions['lane']) =>
    options.cpu ? await options.cpu.run(synthesizeTask, { text, voiceId: found.id }, { lane }) : synthesizeWith(text, found.params);
  return {
    name: 'builtin',
    engine,
    voices: () => BUILTIN_VOICES.map(({ params: _params, ...info }) => info),
    async synthesize(text: string, voiceId: string, synthesizeOptions: SynthesizeOptions = {}): Promise<SynthesizedAudio> {
      const found = byId.get(voiceId);
      if (!found) throw new Error(`builtin TTS has no voice ${voiceId}`);
      if (espeak && (await engine()) === 'espeak-ng') {
        try {
          return await espeak.synthesize(text, voiceId);
        } catch (error) {
          // A failed run (killed at its time-out, a voice missing from the installed data) still speaks.
          options.onEspeakError?.(error as Error);
        }
      }
      return { pcm: await formant(text, found, synthesizeOptions.lane), sampleRate: BUILTIN_SAMPLE_RATE };
    },
  };
}
