import type { MediaStream } from '../ports/media.ts';
import type { StreamingRecognitionSession } from '../ports/speech-model.ts';
import type { SpeechToText } from '../ports/stt.ts';

// Streaming recognition for a cascade call (STT_STREAMING=realtime): one recognition session per
// call hears the caller's frames as they come (the media stream is teed to it), so the words of a
// turn are already transcribed when the call's own VAD ends the turn. `transcribe` then answers at
// once with the final results of the speech that ended since the last turn, waiting only for an
// utterance the recogniser is still finishing. The recogniser's VAD ends an utterance sooner than
// the turn ends (half the agent's turn-ending silence), so its final is usually back first. Its
// interim results are told as they come (`onInterim`): words heard over the agent cut it.

export interface StreamingRecognizer {
  /** The call's recogniser: the finals heard since the last turn. */
  stt: SpeechToText;
  /** The media stream with every caller frame also sent to the recognition session. */
  tee(stream: MediaStream): MediaStream;
  /** Registers the receiver of interim results: the text so far of the utterance being heard. */
  onInterim(listener: (text: string) => void): void;
  close(): void;
}

/** A turn that found nothing transcribed waits this long for the recogniser to report the words (network lag). */
const GRACE_MS = 300;

export function createStreamingRecognizer(session: StreamingRecognitionSession, options: { timeoutMs: number; graceMs?: number; onError?: (message: string) => void }): StreamingRecognizer {
  let started = 0;
  let stopped = 0;
  let finals = 0;
  let texts: string[] = [];
  let closed = false;
  let interim: (text: string) => void = () => undefined;
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const waiter of waiters) waiter();
  };
  session.onEvent((event) => {
    if (event.type === 'speech_started') started++;
    else if (event.type === 'speech_stopped') stopped++;
    else if (event.type === 'interim') interim(event.text);
    else if (event.type === 'final') {
      finals++;
      if (event.text) texts.push(event.text);
    } else if (event.type === 'error') options.onError?.(event.message);
    else if (event.type === 'closed') closed = true;
    wake();
  });
  /** Every utterance the recogniser heard has ended and has its final. */
  const settled = () => closed || (started === stopped && finals >= stopped);

  async function transcribe(_audio: Int16Array, transcribeOptions: { language: string; signal?: AbortSignal }): Promise<string> {
    // Nothing transcribed yet: the recogniser may not have reported the turn's words yet (a closed
    // session will report nothing more, also when it closes while the turn waits).
    let graceOver = texts.length > 0;
    const ready = () => closed || (settled() && (graceOver || texts.length > 0));
    if (!ready()) {
      await new Promise<void>((resolve, reject) => {
        const grace = setTimeout(() => {
          graceOver = true;
          check();
        }, options.graceMs ?? GRACE_MS);
        const done = () => {
          clearTimeout(grace);
          clearTimeout(timer);
          waiters.delete(check);
          transcribeOptions.signal?.removeEventListener('abort', aborted);
        };
        const check = () => {
          if (!ready()) return;
          done();
          resolve();
        };
        const aborted = () => {
          done();
          reject(new Error('aborted'));
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`no final transcript within ${options.timeoutMs} ms`));
        }, options.timeoutMs);
        waiters.add(check);
        transcribeOptions.signal?.addEventListener('abort', aborted, { once: true });
      });
    }
    const text = texts.join(' ').trim();
    texts = [];
    return text;
  }

  return {
    stt: { transcribe },
    tee: (stream) => ({
      ...stream,
      onFrame: (listener) =>
        stream.onFrame((frame) => {
          session.sendAudio(frame);
          listener(frame);
        }),
    }),
    onInterim: (listener) => {
      interim = listener;
    },
    close: () => session.close(),
  };
}
