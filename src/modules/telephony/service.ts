import { randomBytes } from 'node:crypto';
import type { WebSocket } from 'ws';
import { newId } from '../../platform/ids.ts';
import { toE164 } from '../../platform/phone.ts';
import type { Platform } from '../../platform/platform.ts';
import { sha256Hex } from '../../platform/secrets.ts';
import type { CarrierCallStatus, CarrierRequest, CarrierWebhooks } from '../../ports/telephony.ts';
import type { CallsModule } from '../calls/module.ts';
import type { CallRow, CallStatus, EndReason } from '../calls/tables.ts';
import { findAssignedNumber } from '../phone-numbers/repo.ts';

// What a carrier's verified requests do to calls, through the port's webhooks (the adapter speaks
// the carrier's protocol). The voice webhook answers an inbound call to an assigned number (a new
// call) or an answered outbound call by connecting it to our media stream with a single-use token;
// the media stream that presents the token is answered in this process (calls runner.answer);
// status callbacks settle calls that end before they are answered, and the answering-machine
// verdict turns a live call to voicemail handling.

/** A carrier's final statuses of a call that was never connected to us, as our terminal states. */
const UNANSWERED: Partial<Record<CarrierCallStatus, { status: CallStatus; endReason: EndReason }>> = {
  busy: { status: 'busy', endReason: 'busy' },
  no_answer: { status: 'no_answer', endReason: 'no_answer' },
  failed: { status: 'failed', endReason: 'failed_to_connect' },
  canceled: { status: 'canceled', endReason: 'customer_hangup' },
  // Hung up before the stream connected.
  completed: { status: 'canceled', endReason: 'customer_hangup' },
};

export function createTelephonyService(platform: Platform, calls: CallsModule, webhooks: CarrierWebhooks) {
  const { db, config } = platform;
  const { journal, runner } = calls;
  const provider = webhooks.description.carrier;

  /** Connects a ringing call to our media stream, with a fresh single-use token bound to it. */
  async function connect(callId: string, carrierCallId: string): Promise<string> {
    const token = randomBytes(24).toString('base64url');
    if (!(await journal.expectStream(callId, carrierCallId, sha256Hex(token)))) return webhooks.reject();
    return webhooks.connect(callId, token);
  }

  /** The carrier's call by our id, else by the carrier's (the calls module reads it). */
  const callOf = (callId: string | undefined, carrierCallId: string | undefined) => calls.reads.carrierCall(provider, { callId, carrierCallId });

  /** A caller dialed one of our numbers: a new inbound call, ringing, leased by this process until its stream connects. */
  async function inbound(carrierCallId: string, from: string, to: string): Promise<string> {
    const number = toE164(to);
    const assigned = number ? await findAssignedNumber(db, number) : undefined;
    if (!number || !assigned?.agent_id) return webhooks.reject('The number you have called is not in service.');
    const id = newId('call');
    const row = await db.transaction().execute((tx) =>
      journal.queue(tx, {
        id,
        workspace_id: assigned.workspace_id,
        agent_id: assigned.agent_id as string,
        direction: 'inbound',
        from_number: toE164(from) ?? null,
        to_number: number,
        provider,
        simulation: null,
      }),
    );
    // Inbound calls are always answered (they count toward the live total, never wait).
    await journal.ring(row, runner.holder, config.calls.leaseMs);
    return connect(id, carrierCallId);
  }

  return {
    /** The voice webhook: the carrier's answer for the call it asks about. */
    async voice(request: CarrierRequest): Promise<string> {
      const asked = webhooks.voice(request);
      if (asked.kind === 'unknown') return webhooks.reject();
      if (asked.kind === 'inbound') return inbound(asked.carrierCallId, asked.from, asked.to);
      const call = await callOf(asked.callId, undefined);
      if (call?.status !== 'ringing') return webhooks.reject();
      return connect(call.id, asked.carrierCallId);
    },

    /** A status callback or the asynchronous answering-machine verdict. */
    async status(request: CarrierRequest): Promise<void> {
      const { callId, carrierCallId, event } = webhooks.status(request);
      const call = await callOf(callId, carrierCallId);
      if (!call || !event) return;
      // A verdict goes to the live call; a dial waiting in this process settles itself (its runner writes the outcome).
      if (webhooks.callEvent(call.id, event) || event.kind !== 'status') return;
      const unanswered = UNANSWERED[event.status];
      // A call this process runs is settled by its runner, which knows why it ended (an API hang-up
      // during the dial cancels the call at the carrier, and its `canceled` must not be taken for
      // the caller's).
      if (!unanswered || call.status !== 'ringing' || runner.ended(call.id)) return;
      // Dialed by another instance, or inbound whose stream never came: settled here.
      await journal.finish(call, null, { status: unanswered.status, endReason: unanswered.endReason, durationMs: 0 });
    },

    /** A media stream connected: once it presents its call's token, the call runs here (its lease moves to this process). */
    async stream(socket: WebSocket): Promise<void> {
      let claimed: CallRow | undefined;
      const accepted = await webhooks.acceptStream(socket, async (stream) => {
        claimed = await journal.claimStream(stream.callId, sha256Hex(stream.token), stream.carrierCallId, runner.holder, config.calls.leaseMs);
        return claimed !== undefined;
      });
      // Inbound, or an outbound call another instance dialed: the call runs where its media is.
      if (accepted && claimed) void runner.answer(claimed, accepted.media);
    },
  };
}

export type TelephonyService = ReturnType<typeof createTelephonyService>;
