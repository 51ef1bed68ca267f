import { SAMPLE_RATE } from '../../runtime/audio/frames.ts';
import type { TextToSpeech } from '../../runtime/ports.ts';
import type { TtsRegistry } from './index.ts';
import { DEFAULT_VOICE_ID } from './builtin.ts';

// The call runtime's TextToSpeech over the deployment's TTS providers: audio at the runtime's
// 16 kHz, one chunk per sentence. Lines that repeat (greetings, prompts, the sandbox caller's
// script) are kept in a bounded cache, so a busy process does not synthesise them again.

export interface RuntimeSpeechOptions {
  /** Bound of the cache, in samples (default 16 M samples: 32 MB, about 17 minutes of speech). */
  cacheSamples?: number;
  /** Texts longer than this are never cached. */
  maxCachedText?: number;
}

export function createRuntimeSpeech(registry: TtsRegistry, options: RuntimeSpeechOptions = {}): TextToSpeech {
  const limit = options.cacheSamples ?? 16 * 1024 * 1024;
  const maxText = options.maxCachedText ?? 200;
  const cache = new Map<string, Promise<Int16Array>>();
  let cachedSamples = 0;

  async function render(text: string, voice: string): Promise<Int16Array> {
    const provider = registry.providerOf(voice) ?? registry.providerOf(DEFAULT_VOICE_ID);
    if (!provider) throw new Error(`no TTS provider has voice ${voice}`);
    const audio = await provider.synthesize(text, registry.providerOf(voice) ? voice : DEFAULT_VOICE_ID);
    if (audio.sampleRate === SAMPLE_RATE) return audio.pcm;
    const { resamplePcm16 } = await import('../../runtime/audio/resample.ts');
    return resamplePcm16(audio.pcm, audio.sampleRate, SAMPLE_RATE);
  }

  function cached(text: string, voice: string): Promise<Int16Array> {
    if (text.length > maxText) return render(text, voice);
    const key = `${voice}\u0001${text}`;
    const hit = cache.get(key);
    if (hit) {
      // Most recently used last.
      cache.delete(key);
      cache.set(key, hit);
      return hit;
    }
    const pending = render(text, voice);
    cache.set(key, pending);
    pending.then(
      (pcm) => {
        cachedSamples += pcm.length;
        while (cachedSamples > limit && cache.size > 1) {
          const [oldest, value] = cache.entries().next().value as [string, Promise<Int16Array>];
          cache.delete(oldest);
          void value.then((old) => {
            cachedSamples -= old.length;
          });
          if (oldest === key) break;
        }
      },
      () => cache.delete(key),
    );
    return pending;
  }

  return {
    async *synthesize(text, voice, opts) {
      if (opts?.signal?.aborted) return;
      const pcm = await cached(text, voice);
      if (opts?.signal?.aborted) return;
      yield pcm;
    },
  };
}
