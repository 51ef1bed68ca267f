import { createTtsRegistry } from '../../src/providers/tts/index.ts';
import { createRuntimeSpeech } from '../../src/providers/tts/runtime-speech.ts';

// A caller's real speech for tests: the built-in voice's PCM16 16 kHz, whole.

const speech = createRuntimeSpeech(createTtsRegistry());

export async function spoken(text: string, voice = 'builtin-ben'): Promise<Int16Array> {
  const chunks: Int16Array[] = [];
  for await (const chunk of speech.synthesize(text, voice)) chunks.push(chunk);
  return Int16Array.from(chunks.flatMap((c) => Array.from(c)));
}
