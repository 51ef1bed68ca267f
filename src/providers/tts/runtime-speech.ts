import { concatPcm, SAMPLE_RATE } from '../../platform/audio/frames.ts';
import { createResampler, type Resampler, resamplePcm16 } from '../../platform/audio/resample.ts';
import { DEFAULT_VOICE_ID, type TextToSpeech, type TtsRegistry } from '../../ports/tts.ts';

// The call runtime's TextToSpeech over the deployment's TTS providers: audio at the runtime's
// 16 kHz. A provider that streams (an HTTP API sending its PCM as it synthesises) is played as it
// arrives, resampled chunk by chunk, so the first words of a sentence play before its end is
// synthesised; others give one chunk per sentence. Lines that repeat (greetings, prompts, the
// sandbox caller's script) are kept whole in a bounded cache, so a busy process does not
// synthesise them again: the first time a line is spoken it streams and its pieces are kept.

export interface RuntimeSpeechOptions {
  /** Bound of the cache, in samples (default 16 M samples: 32 MB, about 17 minutes of speech). */
  cacheSamples?: number;
  /** Texts longer than this are never cached. */
  maxCachedText?: number;
}

/** A cached line; undefined when its first speaker stopped before the end (the next one speaks it anew). */
type CacheEntry = Promise<Int16Array | undefined>;

export function createRuntimeSpeech(registry: TtsRegistry, options: RuntimeSpeechOptions = {}): TextToSpeech {
  const maxText = options.maxCachedText ?? 200;
  const cache = createLineCache(options.cacheSamples ?? 16 * 1024 * 1024);

  /** Speaks a line not in the cache, keeping its pieces: the whole line is cached once it ends. */
  async function* speakAndRemember(key: string, text: string, voice: string, signal: AbortSignal | undefined) {
    let settle: (pcm: Int16Array | undefined) => void = () => undefined;
    const entry: CacheEntry = new Promise((resolve) => {
      settle = resolve;
    });
    cache.remember(key, entry);
    const pieces: Int16Array[] = [];
    let complete = false;
    try {
      for await (const pcm of liveSpeech(registry, text, voice, signal)) {
        if (signal?.aborted) break;
        pieces.push(pcm);
        yield pcm;
      }
      complete = !signal?.aborted;
    } finally {
      // Failed, aborted, or the listener left: nothing cached; a line waiting on it speaks it itself.
      if (!complete) cache.forget(key, entry);
      settle(complete ? concatPcm(pieces) : undefined);
    }
  }

  return {
    async *synthesize(text, voice, opts) {
      const signal = opts?.signal;
      if (signal?.aborted) return;
      if (text.length > maxText) {
        for await (const pcm of liveSpeech(registry, text, voice, signal)) {
          if (signal?.aborted) return;
          yield pcm;
        }
        return;
      }
      const key = `${voice}\u0001${text}`;
      for (let hit = cache.lookup(key); hit; hit = cache.lookup(key)) {
        const pcm = await hit;
        if (signal?.aborted) return;
        if (pcm) {
          yield pcm;
          return;
        }
      }
      yield* speakAndRemember(key, text, voice, signal);
    },
  };
}

/** The sentence as 16 kHz chunks while the provider produces it (one chunk from a provider that does not stream). */
async function* liveSpeech(registry: TtsRegistry, text: string, voice: string, signal: AbortSignal | undefined): AsyncGenerator<Int16Array> {
  const known = registry.providerOf(voice);
  const provider = known ?? registry.providerOf(DEFAULT_VOICE_ID);
  if (!provider) throw new Error(`no TTS provider has voice ${voice}`);
  const voiceId = known ? voice : DEFAULT_VOICE_ID;
  if (!provider.stream) {
    // A live call's speech: it waits for a busy CPU pool rather than being refused.
    const audio = await provider.synthesize(text, voiceId, { lane: 'live' });
    yield await resamplePcm16(audio.pcm, audio.sampleRate, SAMPLE_RATE);
    return;
  }
  // One resampler for the whole sentence: it keeps its filter state from chunk to chunk.
  let resampler: Resampler | undefined;
  try {
    for await (const audio of provider.stream(text, voiceId, signal)) {
      resampler ??= await createResampler(audio.sampleRate, SAMPLE_RATE);
      const pcm = resampler.process(audio.pcm);
      if (pcm.length > 0) yield pcm;
    }
  } finally {
    resampler?.close();
  }
}

/** Whole lines by key, least recently used first out once they hold more than `limit` samples. */
function createLineCache(limit: number) {
  const cache = new Map<string, CacheEntry>();
  let cachedSamples = 0;
  return {
    lookup(key: string): CacheEntry | undefined {
      const hit = cache.get(key);
      if (hit) {
        // Most recently used last.
        cache.delete(key);
        cache.set(key, hit);
      }
      return hit;
    },
    /** Drops `entry` unless another has taken its key since. */
    forget(key: string, entry: CacheEntry) {
      if (cache.get(key) === entry) cache.delete(key);
    },
    remember(key: string, entry: CacheEntry) {
      cache.set(key, entry);
      void entry.then((pcm) => {
        if (!pcm) return;
        cachedSamples += pcm.length;
        while (cachedSamples > limit && cache.size > 1) {
          const [oldest, value] = cache.entries().next().value as [string, CacheEntry];
          cache.delete(oldest);
          void value.then((old) => {
            cachedSamples -= old?.length ?? 0;
          });
          if (oldest === key) break;
        }
      });
    },
  };
}

