// The fake Realtime server's voice activity detection, on the audio's own time (samples counted,
// never the wall clock): a 10 ms window is speech when its loudest sample reaches the threshold;
// speech starts at the first such window and stops after `silence_duration_ms` of quiet windows.
// So the same audio gives the same events on an idle or a busy machine. The samples are at the
// session's input rate (24 kHz PCM, 8 kHz G.711).

export const REALTIME_RATE = 24_000;

export type VadEvent = { type: 'speech_started'; audioMs: number } | { type: 'speech_stopped'; audioMs: number };

export function createFakeVad(settings: () => { silenceMs: number; threshold: number; rate: number }) {
  let samples = 0;
  let speaking = false;
  let quietSamples = 0;
  let window: number[] = [];
  const ms = (count: number) => Math.round((count * 1000) / settings().rate);

  function decide(loudest: number, events: VadEvent[]) {
    const { silenceMs, threshold } = settings();
    if (loudest >= threshold) {
      quietSamples = 0;
      if (!speaking) {
        speaking = true;
        events.push({ type: 'speech_started', audioMs: ms(samples - window.length) });
      }
    } else if (speaking) {
      quietSamples += window.length;
      if (ms(quietSamples) >= silenceMs) {
        speaking = false;
        quietSamples = 0;
        events.push({ type: 'speech_stopped', audioMs: ms(samples) });
      }
    }
  }

  return {
    /** Feeds PCM16 at the session's input rate; answers what it heard, in order. */
    push(pcm: Int16Array): VadEvent[] {
      const events: VadEvent[] = [];
      const size = settings().rate / 100;
      for (const sample of pcm) {
        window.push(Math.abs(sample));
        samples += 1;
        if (window.length === size) {
          decide(Math.max(...window), events);
          window = [];
        }
      }
      return events;
    },
    get speaking() {
      return speaking;
    },
    /** Milliseconds of audio received so far. */
    audioMs: () => ms(samples),
  };
}
