import type { DialogueEngine } from '../engine/types.ts';
import { held, type RuntimeClock } from '../ports/clock.ts';
import type { SpeechToText } from '../ports/stt.ts';
import type { SimulatedLatency } from '../ports/telephony.ts';
import type { TextToSpeech } from '../ports/tts.ts';

// The ports a call session uses, as its clock sees them. The platform's own work (recognition, the
// engine, synthesis) is handed to the clock's `hold`: on a sandbox call's virtual clock time stands
// still while it runs, so computing costs the call nothing and a loaded machine changes nothing.
// Simulated provider latencies (a sandbox call's `simulation.latency`) are waits on the clock
// instead, outside the hold: they are part of the call, as a real provider's delays would be.

export interface SessionPorts {
  stt: SpeechToText;
  tts: TextToSpeech;
  engine: DialogueEngine;
}

/** Waits `ms` of `clock`'s time; rejects with the signal's reason when it is aborted first. */
export function sleep(clock: RuntimeClock, ms: number, signal?: AbortSignal): Promise<void> {
  if (!(ms > 0)) return signal?.aborted ? Promise.reject(signal.reason) : Promise.resolve();
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      timer.cancel();
      reject(signal?.reason);
    };
    const timer = clock.setTimer(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export function timedPorts(clock: RuntimeClock, ports: SessionPorts, latency: SimulatedLatency = {}): SessionPorts {
  const { stt, tts, engine } = ports;
  return {
    stt: {
      stateless: stt.stateless,
      async transcribe(audio, options) {
        const text = await held(clock, stt.transcribe(audio, options));
        await sleep(clock, latency.stt_ms ?? 0, options.signal);
        return text;
      },
    },
    tts: {
      async *synthesize(text, voice, options) {
        await sleep(clock, latency.tts_first_audio_ms ?? 0, options?.signal);
        const chunks = tts.synthesize(text, voice, options)[Symbol.asyncIterator]();
        try {
          for (;;) {
            const next = await held(clock, chunks.next());
            if (next.done) return;
            yield next.value;
          }
        } finally {
          await chunks.return?.();
        }
      },
    },
    engine: {
      greet: (agent, variables) => engine.greet(agent, variables),
      extract: (agent, transcript) => engine.extract(agent, transcript),
      toolsFor: (input) => engine.toolsFor(input),
      async respond(input) {
        await sleep(clock, latency.llm_first_token_ms ?? 0, input.signal);
        return held(clock, engine.respond(input));
      },
    },
  };
}
