import { createMediaPair } from './media-pair.ts';
import { held, type RuntimeClock } from '../../ports/clock.ts';
import type { MediaStream } from '../../ports/media.ts';
import type { CallerUtterance, CallMedia, DialOutcome, DialRequest, InboundRequest, SandboxTelephony } from '../../ports/telephony.ts';
import type { TextToSpeech } from '../../ports/tts.ts';
import { createPassThroughStt, createScriptedCaller } from './scripted-caller.ts';

// The sandbox telephony provider (DESIGN "Sandbox telephony"): it simulates the callee. The
// destination number decides what happens; any other number answers and holds a short scripted
// conversation ending with goodbye. The simulated caller speaks through the same media path as a
// real one (synthesised audio, its text passed through as the sandbox's STT). Each call runs on a
// virtual clock of its own, from the dial on (runtime/virtual-clock.ts): its times are the same on
// any machine, under any load.

export const SANDBOX_NUMBERS = {
  busy: '+15550100101',
  noAnswer: '+15550100102',
  failsToConnect: '+15550100103',
  asksForHuman: '+15550100104',
  voicemail: '+15550100105',
  hangsUp: '+15550100106',
  mediaError: '+15550100107',
} as const;

export const RING_MS = 2000;
export const NO_ANSWER_MS = 20_000;
export const CONNECT_FAILURE_MS = 300;

export const DEFAULT_SCRIPT: CallerUtterance[] = ["Hi, I'm calling to ask about your opening hours.", 'Great, thank you. Goodbye!'];
const HUMAN_SCRIPT: CallerUtterance[] = ['Hi, can I speak to a human, please?'];
const MID_CALL_SCRIPT: CallerUtterance[] = ['Hi, I have a quick question about my order.'];
const MACHINE_GREETING = "Hi, you've reached the voicemail of this number. Please leave a message after the tone.";

export interface SandboxTelephonyDeps {
  /** A new call's clock: virtual time capped at SANDBOX_SPEED, or real time for an agent that is a real-time service. */
  newClock(kind?: 'virtual' | 'real'): RuntimeClock;
  tts: TextToSpeech;
  /** The caller's voice; a built-in voice id. */
  callerVoice?: string;
}

export function createSandboxTelephony(deps: SandboxTelephonyDeps): SandboxTelephony {
  const voice = deps.callerVoice ?? 'builtin-ben';

  function wait(clock: RuntimeClock, ms: number, signal?: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve(false);
      const timer = clock.setTimer(() => resolve(true), ms);
      signal?.addEventListener('abort', () => {
        timer.cancel();
        resolve(false);
      });
    });
  }

  /** The callee's side of a connected call. */
  function connect(clock: RuntimeClock, to: string, simulation: DialRequest['simulation']): CallMedia {
    const pair = createMediaPair();
    const { far } = pair;
    // Time stands still from the answer until the runtime listens (it loads the agent, its VAD, the
    // balance): the callee's first frame and the call's first millisecond are the same on any machine.
    let listening = () => {};
    void held(clock, new Promise<void>((resolve) => (listening = resolve)));
    const stream: MediaStream = {
      ...pair.stream,
      onFrame(listener) {
        pair.stream.onFrame(listener);
        listening();
      },
      close() {
        listening();
        pair.stream.close();
      },
    };
    const stt = createPassThroughStt();
    const machine = to === SANDBOX_NUMBERS.voicemail;
    const own = simulation?.caller_script;
    const script = own ?? (to === SANDBOX_NUMBERS.asksForHuman ? HUMAN_SCRIPT : machine ? [] : to === SANDBOX_NUMBERS.hangsUp || to === SANDBOX_NUMBERS.mediaError ? MID_CALL_SCRIPT : DEFAULT_SCRIPT);
    const caller = createScriptedCaller(
      {
        clock,
        far,
        tts: deps.tts,
        voice,
        script,
        opening: machine ? MACHINE_GREETING : undefined,
        // The greeting is the first agent turn; these hang up after the agent's first answer.
        hangUpAfterAgentTurns: to === SANDBOX_NUMBERS.hangsUp ? 2 : undefined,
        failAfterAgentTurns: to === SANDBOX_NUMBERS.mediaError ? 2 : undefined,
      },
      stt,
    );
    caller.start();
    return {
      stream,
      stt,
      clock,
      latency: simulation?.latency,
      answeredBy: machine ? 'machine' : 'human',
      async transfer() {
        caller.stop();
        stream.close();
      },
      async hangup() {
        caller.stop();
        stream.close();
      },
    };
  }

  return {
    name: 'sandbox',
    simulated: true,
    ownsCallerIds: false,
    inbound: true,
    async dial(request: DialRequest): Promise<DialOutcome> {
      const { to, signal } = request;
      const clock = deps.newClock(request.realTime ? 'real' : 'virtual');
      if (to === SANDBOX_NUMBERS.failsToConnect) {
        await wait(clock, CONNECT_FAILURE_MS, signal);
        return { kind: 'failed', message: 'the sandbox number fails to connect' };
      }
      if (to === SANDBOX_NUMBERS.noAnswer) {
        await wait(clock, NO_ANSWER_MS, signal);
        return { kind: 'no_answer' };
      }
      const rang = await wait(clock, RING_MS, signal);
      if (to === SANDBOX_NUMBERS.busy) return { kind: 'busy' };
      if (!rang) return { kind: 'failed', message: 'canceled while ringing' };
      return { kind: 'answered', media: connect(clock, to, request.simulation) };
    },
    acceptInbound(request: InboundRequest): CallMedia {
      return connect(deps.newClock(request.realTime ? 'real' : 'virtual'), request.to, request.simulation);
    },
  };
}
