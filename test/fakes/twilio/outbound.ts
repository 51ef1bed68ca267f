import type { CallRecord } from './call.ts';
import { fetchTwiml, runTwiml } from './runner.ts';
import type { FakeCallee } from './types.ts';

// What happens after POST Calls.json: the call leaves the queue (initiated), rings, and the callee
// answers, is busy, does not answer, or the call fails. On an answer Twilio asks the voice Url for
// TwiML. With MachineDetection and no AsyncAmd it first waits for the detection and sends its result
// as AnsweredBy; with AsyncAmd=true the TwiML runs at once and the result is POSTed later to
// AsyncAmdStatusCallback (AccountSid, CallSid, AnsweredBy, MachineDetectionDuration).

export interface OutboundPlan {
  url?: string;
  method: string;
  twiml?: string;
  /** 'Enable' or 'DetectMessageEnd'. */
  machineDetection?: string;
  asyncAmd: boolean;
  asyncAmdStatusCallback?: { url: string; method: string };
  /** Timeout: how long to let it ring before giving up as no-answer (Twilio's default 60 s). */
  ringTimeoutMs: number;
}

export const DEFAULT_CALLEE: FakeCallee = { answer: 'human' };
const DEFAULT_RING_MS = 100;
const DEFAULT_AMD_MS = 1500;
/** Between leaving the queue and the far end ringing (call time). */
const SETUP_MS = 20;
/** How long a verdict that waits for the agent's words waits for them (wall time). */
const AGENT_WORDS_WAIT_MS = 60_000;

export async function dialOutbound(call: CallRecord, plan: OutboundPlan, callee: FakeCallee): Promise<void> {
  const { timers, speed } = call.ctx;
  await timers.sleep(0);
  if (call.final) return;
  await call.sendStatusCallback('initiated');
  await timers.sleep(SETUP_MS / speed);
  if (call.final) return;
  call.setStatus('ringing');
  await call.sendStatusCallback('ringing');
  const ringMs = callee.ringMs ?? DEFAULT_RING_MS;
  await timers.sleep(Math.min(ringMs, plan.ringTimeoutMs) / speed);
  // An update with Status=canceled may have ended the call while it rang.
  if (call.final) return;
  if (ringMs > plan.ringTimeoutMs) return call.finish('no-answer');
  if (callee.answer === 'human' || callee.answer === 'machine') return answer(call, plan, callee);
  await call.finish(callee.answer);
}

/** The AnsweredBy value Twilio reports for this callee in this detection mode. */
function answeredBy(plan: OutboundPlan, callee: FakeCallee): string {
  if (callee.answer === 'human') return 'human';
  // Enable reports a machine as soon as it hears one; DetectMessageEnd waits for the greeting to end.
  return plan.machineDetection === 'DetectMessageEnd' ? 'machine_end_beep' : 'machine_start';
}

async function answer(call: CallRecord, plan: OutboundPlan, callee: FakeCallee): Promise<void> {
  const { timers, speed } = call.ctx;
  call.setStatus('in-progress');
  await call.sendStatusCallback('answered');
  const detectionMs = callee.amdDelayMs ?? DEFAULT_AMD_MS;
  const detected = { AnsweredBy: answeredBy(plan, callee), MachineDetectionDuration: String(Math.round(detectionMs)) };
  let extra: Record<string, string> = {};
  if (plan.machineDetection && !plan.asyncAmd) {
    await timers.sleep(detectionMs / speed);
    if (call.final) return;
    call.answeredBy = detected.AnsweredBy;
    extra = detected;
  } else if (plan.machineDetection && callee.verdictBeforeMedia) {
    await timers.sleep(detectionMs / speed);
    await reportAsyncAmd(call, plan, detected);
  } else if (plan.machineDetection && callee.verdictWhileAgentSpeaks) {
    void call.playback
      .waitForSpeech(AGENT_WORDS_WAIT_MS)
      .then(() => timers.sleep(detectionMs / speed))
      .then(() => reportAsyncAmd(call, plan, detected))
      .catch((error: Error) => call.warn(`no machine verdict: ${error.message}`));
  } else if (plan.machineDetection) {
    timers.after(detectionMs / speed, () => void reportAsyncAmd(call, plan, detected));
  }
  const twiml = plan.twiml ?? (plan.url ? await fetchTwiml(call, plan.url, plan.method, extra) : undefined);
  if (call.final) return;
  await runTwiml(call, twiml, plan.url);
}

async function reportAsyncAmd(call: CallRecord, plan: OutboundPlan, detected: Record<string, string>): Promise<void> {
  if (call.final) return;
  call.answeredBy = detected.AnsweredBy;
  const callback = plan.asyncAmdStatusCallback;
  if (!callback) {
    call.warn('21262: AsyncAmd is on but no AsyncAmdStatusCallback was given; the result is only on the Call resource');
    return;
  }
  await call.notify(callback.url, callback.method, { AccountSid: call.ctx.accountSid, CallSid: call.sid, ...detected });
}
