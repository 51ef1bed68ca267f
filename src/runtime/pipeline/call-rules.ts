import { held, type RuntimeTimer } from '../../ports/clock.ts';
import type { After } from '../agent-turn.ts';
import type { CallShell, PipelineParts } from './call-pipeline.ts';
import type { CallEnding } from './call-end.ts';

// The call shell's rules: silence ("still there?", then the end), voicemail (a machine's greeting
// awaited, the message left or the call hung up), and what follows the agent's words (the end,
// the voicemail, a transfer).

export const STILL_THERE_PROMPT = 'Are you still there?';

type RulesShell = Pick<CallShell, 'clock' | 'media' | 'agent' | 'observer' | 'speaker' | 'signal'>;

export function callRules(shell: RulesShell, ending: CallEnding, parts: () => PipelineParts) {
  const { agent, speaker } = shell;
  let silenceTimer: RuntimeTimer | null = null;
  let promptedStillThere = false;
  let voicemail: CallShell['voicemail'] = 'none';

  function callerActive() {
    silenceTimer?.cancel();
    silenceTimer = null;
  }

  function armSilence() {
    silenceTimer?.cancel();
    silenceTimer = ending.later(() => {
      silenceTimer = null;
      if (ending.ended || parts().busy()) return;
      if (promptedStillThere) return ending.finish({ status: 'completed', endReason: 'silence_timeout' });
      promptedStillThere = true;
      parts().say(STILL_THERE_PROMPT, null);
    }, agent.silence_timeout_seconds * 1000);
  }

  async function transfer(to: string, reason: string) {
    shell.observer.transfer(to, reason);
    shell.signal({ type: 'transfer', to });
    speaker.clear();
    await held(shell.clock, shell.media.transfer(to)).catch((error) => shell.observer.error('transfer_failed', String(error)));
    ending.finish({ status: 'transferred', endReason: 'transferred', transferredTo: to });
  }

  /** `cut`: the verdict came while the agent talked (its words stop) rather than before it said anything. */
  function leaveVoicemail(cut: boolean) {
    if (ending.ended || voicemail === 'leaving') return;
    voicemail = 'leaving';
    shell.signal({ type: 'voicemail' });
    if (cut) {
      speaker.clear();
      shell.media.stream.clear();
    }
    callerActive();
    if (agent.voicemail.action === 'hangup') return ending.finish({ status: 'voicemail', endReason: 'voicemail' });
    parts().say(agent.voicemail.message ?? `Hello, this is ${agent.name}. Please call us back.`, { kind: 'voicemail' });
  }

  return {
    get voicemail() {
      return voicemail;
    },
    awaitMachineGreeting() {
      voicemail = 'pending';
    },
    callerActive,
    callerSpoke() {
      promptedStillThere = false;
    },
    async proceed(after: After | null) {
      if (ending.ended) return;
      if (!after) return armSilence();
      if (after.kind === 'end') return ending.finish({ status: 'completed', endReason: after.reason });
      if (after.kind === 'voicemail') return ending.finish({ status: 'voicemail', endReason: 'voicemail' });
      await transfer(after.to, after.reason);
    },
    transfer,
    leaveVoicemail,
  };
}
