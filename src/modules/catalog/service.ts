import { createHash } from 'node:crypto';
import type { CpuPool } from '../../platform/cpu-pool.ts';
import { notFound } from '../../platform/errors.ts';
import { encodeMp3InPool } from '../../platform/audio/mp3.ts';
import { sampleSentence } from './sample-sentence.ts';
import type { TtsRegistry } from '../../ports/tts.ts';
import type { Voice, VoiceListQuery } from './schemas.ts';
import { AGENT_TEMPLATES } from './templates.ts';

export interface CatalogServiceDeps {
  tts: TtsRegistry;
  publicBaseUrl: string;
  /** Where MP3 encoding runs (and built-in synthesis, when the registry was given the same pool). */
  cpu: CpuPool;
}

export interface AudioFile {
  bytes: Buffer;
  etag: string;
}

/** Previews of the sample sentence kept per voice (synthesis is deterministic, so they never change). */
const MAX_CACHED_PREVIEWS = 64;

export function createCatalogService(deps: CatalogServiceDeps) {
  // Kept as promises: concurrent first requests for a voice share one rendering.
  const previews = new Map<string, Promise<AudioFile>>();

  const present = (voice: ReturnType<TtsRegistry['voices']>[number]): Voice => ({
    ...voice,
    preview_url: `${deps.publicBaseUrl}/v1/voices/${encodeURIComponent(voice.id)}/preview`,
  });

  async function render(voiceId: string, text: string): Promise<AudioFile> {
    const provider = deps.tts.providerOf(voiceId);
    if (!provider) throw notFound('voice');
    const audio = await provider.synthesize(text, voiceId);
    const bytes = await encodeMp3InPool(deps.cpu, audio.pcm, audio.sampleRate);
    return { bytes, etag: `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 27)}"` };
  }

  return {
    listVoices(query: VoiceListQuery) {
      const language = query.language?.toLowerCase();
      const data = deps.tts
        .voices()
        .filter((v) => !language || v.language.toLowerCase() === language || v.language.toLowerCase().split('-')[0] === language)
        .filter((v) => !query.provider || v.provider === query.provider)
        .filter((v) => !query.gender || v.gender === query.gender)
        .map(present);
      return { data, has_more: false, next_cursor: null };
    },

    /** MP3 of the voice speaking `text`, or its language's sample sentence. */
    async preview(voiceId: string, text?: string): Promise<AudioFile> {
      const voice = deps.tts.findVoice(voiceId);
      if (!voice) throw notFound('voice');
      if (text !== undefined) return render(voiceId, text);
      const cached = previews.get(voiceId);
      if (cached) return cached;
      const rendering = render(voiceId, sampleSentence(voice.language));
      if (previews.size < MAX_CACHED_PREVIEWS) {
        previews.set(voiceId, rendering);
        rendering.catch(() => previews.delete(voiceId));
      }
      return rendering;
    },

    listTemplates() {
      return { data: [...AGENT_TEMPLATES], has_more: false, next_cursor: null };
    },
  };
}

export type CatalogService = ReturnType<typeof createCatalogService>;
