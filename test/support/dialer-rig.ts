import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import type { CallStatus, EndReason } from '../../src/modules/calls/tables.ts';
import { createCampaignDialer } from '../../src/modules/campaigns/dialer.ts';
import type { EmitInput } from '../../src/platform/outbox/emit.ts';
import { journalRig } from './call-rows.ts';
import { T0 } from './campaign-rows.ts';

// The campaign dialer (src/modules/campaigns/dialer.ts) built as the campaigns module builds it,
// without the app: the real call journal (its finish path runs the dialer's hook in its
// transaction), the real event emitter writing to the outbox (wrapped only to record what was
// emitted, so `tenantOnly` can be read), a manual clock, a silent logger and a `nudgeCalls` that
// counts. No job is started unless a test starts it: a test drives `runDueOnce()` and ends calls through `finish`.

const silent = pino({ level: 'silent' }) as unknown as FastifyBaseLogger;

/** The journal's state before each terminal one, as a real call reaches it. */
const BEFORE: Record<CallStatus, CallStatus[]> = {
  queued: [],
  ringing: [],
  in_progress: ['ringing'],
  completed: ['ringing', 'in_progress'],
  transferred: ['ringing', 'in_progress'],
  voicemail: ['ringing', 'in_progress'],
  failed: [],
  busy: ['ringing'],
  no_answer: ['ringing'],
  canceled: [],
};

/** `pollIntervalMs`: the job's safety-net poll, for a test that starts it (`dialer.start()`). */
export async function dialerRig(options: { pollIntervalMs?: number } = {}) {
  const emitted: EmitInput[] = [];
  const { database, db, clock, journal, events } = await journalRig({ rates: { callPerMinMicros: 0, webVoicePerMinMicros: 0 }, onEmit: (input) => emitted.push(input), nudgePostCall: false });
  let nudges = 0;
  const dialer = createCampaignDialer({
    database,
    clock,
    logger: silent,
    events,
    journal,
    provider: 'sandbox-rig',
    pollIntervalMs: options.pollIntervalMs,
    nudgeCalls: () => {
      nudges += 1;
    },
  });

  /** Ends the call through the journal's finish path, after the states a real call passes first. */
  async function finish(callId: string, status: CallStatus, endReason: EndReason = 'agent_end_call'): Promise<boolean> {
    const call = await db.selectFrom('calls').select(['id', 'workspace_id', 'agent_id', 'direction', 'from_number', 'to_number']).where('id', '=', callId).executeTakeFirstOrThrow();
    const holder = 'rig';
    for (const step of BEFORE[status]) {
      if (step === 'ringing') await journal.ring(call, holder, 60_000);
      else await journal.answered(call, null, holder);
    }
    return journal.finish(call, null, { status, endReason, durationMs: 0 });
  }

  /** Leaves no running campaign but the test's own (a pass locks every running campaign). */
  const parkOthers = () => db.updateTable('campaigns').set({ status: 'completed' }).where('status', '=', 'running').execute();

  /** Lets the `setImmediate` callbacks queued so far run. */
  const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

  return {
    database,
    db,
    clock,
    journal,
    dialer,
    finish,
    settle,
    nudges: () => nudges,
    /** The `campaign.completed` events emitted, in order. */
    completions: () => emitted.filter((e) => e.type === 'campaign.completed'),
    /** Before each test: the nudges of an earlier one's refill run, the clock back at T0, no campaign left running. */
    async reset() {
      await settle();
      clock.set(T0);
      await parkOthers();
    },
    parkOthers,
    campaignOf: (id: string) => db.selectFrom('campaigns').selectAll().where('id', '=', id).executeTakeFirstOrThrow(),
    callsOf: (campaignId: string) => db.selectFrom('calls').selectAll().where('campaign_id', '=', campaignId).orderBy('created_at').orderBy('id').execute(),
    attemptOf: (callId: string) => db.selectFrom('campaign_attempts').selectAll().where('call_id', '=', callId).executeTakeFirstOrThrow(),
  };
}

export type DialerRig = Awaited<ReturnType<typeof dialerRig>>;
