// The speech-to-text port: the text of one caller utterance. Implemented by src/providers/stt/
// (OpenAI-compatible HTTP) and by the sandbox, whose simulated caller passes its text through.

export interface SpeechToText {
  /** The text of one caller utterance (PCM16 16 kHz), or '' when nothing was said. */
  transcribe(audio: Int16Array, options: { language: string; signal?: AbortSignal }): Promise<string>;
  /** Each request stands alone (no order between them): an utterance may be sent early and the answer dropped. */
  readonly stateless?: boolean;
}
