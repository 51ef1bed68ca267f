import { createBuiltinTts } from '../../providers/tts/builtin.ts';

/** The audio tests' caller: a sentence in the built-in voice `builtin-ben`, 16 kHz PCM. */
export async function spokenSentence(): Promise<Int16Array> {
  return (await createBuiltinTts().synthesize('Hello, I would like to book a table for four people tonight.', 'builtin-ben')).pcm;
}
