import { spawn } from 'node:child_process';
import os from 'node:os';
import { resamplePcm16 } from '../../platform/audio/resample.ts';
import { BUILTIN_SAMPLE_RATE } from './builtin.ts';
import type { SynthesizedAudio } from '../../ports/tts.ts';

// The built-in voices through the `espeak-ng` program (Debian package espeak-ng): intelligible,
// offline, many languages, where the formant synthesiser of builtin.ts only sounds like talking.
// The program is run, never a shell: the text goes on stdin (`--stdin`), so a text starting with
// `-` or holding quotes is spoken, never read as options. Every run is bounded (a time-out that
// kills the process, a cap on its output, a cap on processes running at once) because a
// text-to-speech request must never pin the machine or hang a call.

export interface EspeakVoice {
  /** espeak-ng voice and variant, e.g. `en-us+f3`. */
  voice: string;
  wordsPerMinute: number;
  /** 0..99, espeak-ng's default 50. */
  pitch?: number;
}

/**
 * Each built-in voice as espeak-ng speaks it: its language and gender, a rate near natural speech
 * (about 150-170 words a minute), faster or slower as the voice's description says. British
 * English and French are named `en` and `fr`: espeak-ng 1.51 drops the `+variant` after `en-gb`
 * and `fr-fr` (measured: a male pitch with a female variant).
 */
export const ESPEAK_VOICES: Readonly<Record<string, EspeakVoice>> = {
  'builtin-ava': { voice: 'en-us+f3', wordsPerMinute: 160 },
  'builtin-ben': { voice: 'en-us+m3', wordsPerMinute: 148 },
  'builtin-cora': { voice: 'en+f4', wordsPerMinute: 172 },
  // espeak-ng has no Indian English voice; Received Pronunciation is the nearest it offers.
  'builtin-dev': { voice: 'en-gb-x-rp+m2', wordsPerMinute: 178 },
  'builtin-elena': { voice: 'es+f2', wordsPerMinute: 165 },
  'builtin-felix': { voice: 'de+m4', wordsPerMinute: 142 },
  'builtin-juliette': { voice: 'fr+f5', wordsPerMinute: 168 },
  // Neutral: a male variant raised to about 140 Hz, between the female and male voices.
  'builtin-sam': { voice: 'en-us+m5', wordsPerMinute: 160, pitch: 85 },
};

export interface EspeakOptions {
  /** The program to run (default `espeak-ng`, found on PATH). */
  program?: string;
  /** A synthesis not done this long is killed and fails (default 20 s). */
  timeoutMs?: number;
  /** `--version` not answered this long means the program is unusable (default 5 s). */
  detectTimeoutMs?: number;
  /** Processes running at once; more requests wait their turn (default: one per CPU). */
  maxProcesses?: number;
  /** WAV bytes one synthesis may write (default 32 MB: about 12 minutes of speech). */
  maxOutputBytes?: number;
}

export interface EspeakSpeech {
  /** `espeak-ng --version` run once: its version line, or undefined when the program is missing or fails. */
  detect(): Promise<string | undefined>;
  /** Built-in voice `voiceId` speaking `text` as mono PCM16 at BUILTIN_SAMPLE_RATE; rejects when the run fails. */
  synthesize(text: string, voiceId: string): Promise<SynthesizedAudio>;
  /** espeak-ng processes running now. */
  readonly running: number;
}

export function createEspeakSpeech(options: EspeakOptions = {}): EspeakSpeech {
  const program = options.program ?? 'espeak-ng';
  const timeoutMs = options.timeoutMs ?? 20_000;
  const maxOutputBytes = options.maxOutputBytes ?? 32 * 1024 * 1024;
  const slots = createSlots(options.maxProcesses ?? os.availableParallelism());
  const counter = { running: 0 };
  let detected: Promise<string | undefined> | undefined;

  return {
    get running() {
      return counter.running;
    },
    detect() {
      detected ??= runProgram(program, ['--version'], '', { timeoutMs: options.detectTimeoutMs ?? 5_000, maxOutputBytes: 64 * 1024, counter }).then(
        (out) => {
          const line = out.toString('utf8').split('\n')[0].trim();
          return /espeak/i.test(line) ? line : undefined;
        },
        () => undefined,
      );
      return detected;
    },
    async synthesize(text, voiceId) {
      const voice = ESPEAK_VOICES[voiceId];
      if (!voice) throw new Error(`espeak-ng has no mapping for voice ${voiceId}`);
      // -b 1: the text is UTF-8 (accents of the Spanish, German and French voices).
      const args = ['--stdout', '--stdin', '-b', '1', '-v', voice.voice, '-s', String(voice.wordsPerMinute), '-p', String(voice.pitch ?? 50)];
      const wav = await slots.run(() => runProgram(program, args, text, { timeoutMs, maxOutputBytes, counter }));
      const audio = readWav(wav);
      return { pcm: await resamplePcm16(audio.pcm, audio.sampleRate, BUILTIN_SAMPLE_RATE), sampleRate: BUILTIN_SAMPLE_RATE };
    },
  };
}

/** At most `max` tasks at once; the others wait, first come first served. */
function createSlots(max: number) {
  let active = 0;
  const waiting: Array<() => void> = [];
  return {
    async run<T>(task: () => Promise<T>): Promise<T> {
      if (active < max) active++;
      // The finishing task hands its slot over directly, so `active` stays counted.
      else await new Promise<void>((resolve) => waiting.push(resolve));
      try {
        return await task();
      } finally {
        const next = waiting.shift();
        if (next) next();
        else active--;
      }
    },
  };
}

interface RunLimits {
  timeoutMs: number;
  maxOutputBytes: number;
  counter: { running: number };
}

/** Runs `program` (no shell) with `input` on stdin: its stdout, or a rejection on failure, time-out or too much output. */
function runProgram(program: string, args: string[], input: string, limits: RunLimits): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true });
    limits.counter.running++;
    const out: Buffer[] = [];
    let outBytes = 0;
    let errText = '';
    let failure: Error | undefined;
    const stop = (error: Error) => {
      failure ??= error;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => stop(new Error(`${program} timed out after ${limits.timeoutMs} ms`)), limits.timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > limits.maxOutputBytes) stop(new Error(`${program} wrote more than ${limits.maxOutputBytes} bytes`));
      else out.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (errText.length < 1000) errText += chunk.toString('utf8');
    });
    // A process that dies early closes stdin under us (EPIPE); its exit reports the failure.
    child.stdin.on('error', () => undefined);
    child.stdin.end(input, 'utf8');
    // 'error' without a process (ENOENT: not installed) is followed by 'close' as well.
    child.on('error', (error) => {
      failure ??= error;
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      limits.counter.running--;
      if (failure) reject(failure);
      else if (code !== 0) reject(new Error(`${program} exited with ${code ?? signal}: ${errText.trim().slice(0, 300)}`));
      else resolve(Buffer.concat(out));
    });
  });
}

/**
 * Mono PCM16 WAV bytes → samples. espeak-ng writes to a pipe, so its header cannot know the length:
 * the `data` size it declares (0x7ffff000) is cut to the bytes actually there.
 */
export function readWav(bytes: Buffer): SynthesizedAudio {
  if (bytes.length < 12 || bytes.toString('ascii', 0, 4) !== 'RIFF' || bytes.toString('ascii', 8, 12) !== 'WAVE') throw new Error('not a WAV file');
  let sampleRate = 0;
  let offset = 12;
  while (offset + 8 <= bytes.length) {
    const id = bytes.toString('ascii', offset, offset + 4);
    const size = bytes.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ') {
      const format = bytes.readUInt16LE(body);
      const channels = bytes.readUInt16LE(body + 2);
      const bits = bytes.readUInt16LE(body + 14);
      if (format !== 1 || channels !== 1 || bits !== 16) throw new Error(`WAV is not mono PCM16 (format ${format}, ${channels} channels, ${bits} bits)`);
      sampleRate = bytes.readUInt32LE(body + 4);
    } else if (id === 'data') {
      if (!sampleRate) throw new Error('WAV data before its format');
      const length = Math.floor(Math.min(size, bytes.length - body) / 2);
      const pcm = new Int16Array(length);
      for (let i = 0; i < length; i++) pcm[i] = bytes.readInt16LE(body + i * 2);
      return { pcm, sampleRate };
    }
    // Chunks are padded to an even length.
    offset = body + size + (size % 2);
  }
  throw new Error('WAV without data');
}
