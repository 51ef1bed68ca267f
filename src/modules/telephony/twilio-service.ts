import { randomBytes } from 'node:crypto';
import type { WebSocket } from 'ws';
import { newId } from '../../platform/ids.ts';
import { toE164 } from '../../platform/phone.ts';
import type { Platform } from '../../platform/platform.ts';
import { sha256Hex } from '../../platform/secrets.ts';
import { answeredByOf, type TwilioTelephony } from '../../providers/telephony/twilio.ts';
import { twilioSdk } from '../../providers/telephony/twilio-client.ts';
import { openTwilioMediaStream } from '../../providers/telephony/twilio-media.ts';
import type { CallsModule } from '../calls/module.ts';
import type { CallRow } from '../calls/repo.ts';
import type { CallStatus, EndReason } from '../calls/tables.ts';
import { findAssignedNumber } from '../phone-numbers/repo.ts';

// What Twilio's verified requests do to calls. The voice webhook answers an inbound call to an
// assigned number (a new call) or an answered outbound call with <Connect><Stream> TwiML carrying
// a single-use token; the Media Stream that presents the token runs the call in this process;
// status callbacks settle calls that end before they are answered, and the asynchronous
// answering-machine verdict turns a live call to voicemail handling.

/** Twilio's final statuses of a call that was never connected to us, as our terminal states. */
const UNANSWERED: Record<string, { status: CallStatus; endReason: EndReason }> = {
  busy: { status: 'busy', endReason: 'busy' },
  'no-answer': { status: 'no_answer', endReason: 'no_answer' },
  failed: { status: 'failed', endReason: 'failed_to_connect' },
  canceled: { status: 'canceled', endReason: 'customer_hangup' },
  // Hung up before the stream connected.
  completed: { status: 'canceled', endReason: 'customer_hangup' },
};

export type TwilioParams = Record<string, string>;

export function createTwilioService(platform: Platform, calls: CallsModule, telephony: TwilioTelephony) {
  const { db, config } = platform;
  const { journal, runner } = calls;

  const hangUp = (say?: string) => {
    const response = new (twilioSdk().twiml.VoiceResponse)();
    if (say) response.say(say);
    response.hangup();
    return response.toString();
  };

  /** <Connect><Stream> for a ringing call, with a fresh single-use token bound to it. */
  async function connectTwiml(callId: string, callSid: string): Promise<string> {
    const token = randomBytes(24).toString('base64url');
    if (!(await journal.expectStream(callId, callSid, sha256Hex(token)))) return hangUp();
    const response = new (twilioSdk().twiml.VoiceResponse)();
    const stream = response.connect().stream({ url: telephony.urls.stream });
    stream.parameter({ name: 'call_id', value: callId });
    stream.parameter({ name: 'token', value: token });
    return response.toString();
  }

  async function callOf(callId: string | undefined, callSid: string | undefined): Promise<CallRow | undefined> {
    let query = db.selectFrom('calls').selectAll().where('provider', '=', 'twilio');
    if (callId) query = query.where('id', '=', callId);
    else if (callSid) query = query.where('provider_call_id', '=', callSid);
    else return undefined;
    return query.executeTakeFirst();
  }

  /** A caller dialed one of our numbers: a new inbound call, ringing, leased by this process until its stream connects. */
  async function inbound(params: TwilioParams): Promise<string> {
    const to = toE164(params.To ?? '');
    const number = to ? await findAssignedNumber(db, to) : undefined;
    if (!to || !number?.agent_id) return hangUp('The number you have called is not in service.');
    const id = newId('call');
    const row = await db.transaction().execute((tx) =>
      journal.queue(tx, {
        id,
        workspace_id: number.workspace_id,
        agent_id: number.agent_id as string,
        direction: 'inbound',
        from_number: toE164(params.From ?? '') ?? null,
        to_number: to,
        provider: 'twilio',
        simulation: null,
      }),
    );
    // Inbound calls are always answered (they count toward the live total, never wait).
    await journal.ring(row, runner.holder, config.calls.leaseMs);
    return connectTwiml(id, params.CallSid);
  }

  return {
    /** The voice webhook: TwiML for the call Twilio asks about. */
    async voice(params: TwilioParams, callId: string | undefined): Promise<string> {
      if (!params.CallSid) return hangUp();
      if (!callId) return inbound(params);
      const call = await callOf(callId, undefined);
      if (call?.status !== 'ringing') return hangUp();
      return connectTwiml(call.id, params.CallSid);
    },

    /** A status callback or the asynchronous answering-machine verdict. */
    async status(params: TwilioParams, callId: string | undefined): Promise<void> {
      const call = await callOf(callId, params.CallSid);
      if (!call) return;
      const verdict = answeredByOf(params.AnsweredBy);
      if (verdict) {
        telephony.answeredBy(call.id, verdict);
        return;
      }
      const status = params.CallStatus ?? '';
      // A dial waiting in this process settles itself (its runner writes the outcome).
      if (telephony.statusChanged(call.id, status)) return;
      const unanswered = UNANSWERED[status];
      // A call this process runs is settled by its runner, which knows why it ended (an API hang-up
      // during the dial cancels the call at Twilio, and Twilio's `canceled` must not be taken for
      // the caller's).
      if (!unanswered || call.status !== 'ringing' || telephony.isDialing(call.id) || runner.ended(call.id)) return;
      // Dialed by another instance, or inbound whose stream never came: settled here.
      await journal.finish(call, null, { status: unanswered.status, endReason: unanswered.endReason, durationMs: 0 });
    },

    /** A Media Stream connected: once it presents its call's token, the call runs here. */
    async stream(socket: WebSocket): Promise<void> {
      const stream = await openTwilioMediaStream(socket);
      if (!stream) {
        socket.close(1008, 'no stream start');
        return;
      }
      const { call_id: callId, token } = stream.start.customParameters;
      const validAccount = stream.start.accountSid === config.twilio.accountSid;
      const row = validAccount && callId && token ? await journal.claimStream(callId, sha256Hex(token), stream.start.callSid, runner.holder, config.calls.leaseMs) : undefined;
      if (!row) {
        stream.expectClose();
        socket.close(1008, 'invalid stream token');
        return;
      }
      const media = telephony.mediaOf(row.id, stream);
      if (telephony.answered(row.id, media)) return;
      // Inbound, or an outbound call another instance dialed: the call runs where its media is.
      void runner.answer(row, media);
    },
  };
}

export type TwilioService = ReturnType<typeof createTwilioService>;
