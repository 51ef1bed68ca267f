import type { CallMedia, CarrierCallStatus, DialOutcome, DialRequest, TelephonyProvider } from '../../../ports/telephony.ts';
import { type TwilioClient, twilioSdk } from './client.ts';
import type { TwilioMediaStream } from './media.ts';
import { callStatusOf, createTwilioWebhooks, TWILIO_PATHS } from './webhooks.ts';

// Twilio as the runtime's telephony (DESIGN "Twilio"). Outbound: `calls.create` with status
// callbacks and asynchronous answering-machine detection; the call is answered when its Media
// Stream connects (the voice webhook answers with <Connect><Stream>), and not answered when a
// final status callback says busy, no-answer, failed or canceled. Transfer and hang-up update the
// live call (<Dial> TwiML, status completed). The webhooks and the stream reach this adapter
// through the port's webhooks (webhooks.ts), served and verified by the telephony module.

/** Seconds Twilio lets an outbound call ring before it reports no-answer. */
export const RING_TIMEOUT_SECONDS = 30;

/** The final statuses of a call before it was answered, as the runtime's outcomes. */
const NOT_ANSWERED: Partial<Record<CarrierCallStatus, DialOutcome>> = {
  busy: { kind: 'busy' },
  no_answer: { kind: 'no_answer' },
  failed: { kind: 'failed', message: 'Twilio could not connect the call' },
  canceled: { kind: 'failed', message: 'the call was canceled before it was answered' },
  // Answered but ended before its stream reached this process (or it went to another instance).
  completed: { kind: 'failed', message: 'the call ended before its media connected' },
};

export interface TwilioTelephonyDeps {
  client: TwilioClient;
  /** The address Twilio reaches this deployment at (PUBLIC_BASE_URL). */
  publicBaseUrl: string;
  /** How long a dial waits for word of its call here (default: the ring time-out and a minute). */
  dialDeadlineMs?: number;
}

/** A dial nothing settled by then ends here: Twilio stopped ringing long before. */
const DIAL_DEADLINE_MS = (RING_TIMEOUT_SECONDS + 60) * 1000;

interface PendingDial {
  sid: string;
  resolve: (outcome: DialOutcome) => void;
}

interface LiveMedia {
  verdict: 'human' | 'machine' | null;
  listeners: Array<(who: 'human' | 'machine') => void>;
}

export function createTwilioTelephony(deps: TwilioTelephonyDeps) {
  const { client } = deps;
  const base = deps.publicBaseUrl.replace(/\/$/, '');
  const dials = new Map<string, PendingDial>();
  const live = new Map<string, LiveMedia>();

  const callbackUrl = (path: string, callId: string) => `${base}${path}?call_id=${encodeURIComponent(callId)}`;

  function liveOf(callId: string): LiveMedia {
    let entry = live.get(callId);
    if (!entry) {
      entry = { verdict: null, listeners: [] };
      live.set(callId, entry);
    }
    return entry;
  }

  async function cancel(sid: string) {
    // Twilio cancels a call that is still queued or ringing; completed ends one that was answered meanwhile.
    await client
      .calls(sid)
      .update({ status: 'canceled' })
      .catch(() => client.calls(sid).update({ status: 'completed' }))
      .catch(() => undefined);
  }

  async function dial(request: DialRequest): Promise<DialOutcome> {
    let sid: string;
    try {
      const call = await client.calls.create({
        to: request.to,
        from: request.from,
        url: callbackUrl(TWILIO_PATHS.voice, request.callId),
        method: 'POST',
        statusCallback: callbackUrl(TWILIO_PATHS.status, request.callId),
        statusCallbackMethod: 'POST',
        statusCallbackEvent: ['initiated', 'ringing', 'answered', 'completed'],
        // Every agent handles voicemail (hang up or leave a message): tell a machine from a person,
        // without holding the call while Twilio listens.
        machineDetection: 'DetectMessageEnd',
        asyncAmd: 'true',
        asyncAmdStatusCallback: callbackUrl(TWILIO_PATHS.status, request.callId),
        asyncAmdStatusCallbackMethod: 'POST',
        timeout: RING_TIMEOUT_SECONDS,
      });
      sid = call.sid;
    } catch (error) {
      return { kind: 'failed', message: `Twilio refused the call: ${error instanceof Error ? error.message : String(error)}` };
    }
    return new Promise<DialOutcome>((resolve) => {
      // With several instances, the call's stream and its final status may all reach another one
      // (which then runs the call): this dial would wait forever. It ends once Twilio would long have
      // stopped ringing; the runner's outcome is refused if the call has moved on elsewhere.
      const deadline = setTimeout(
        () => settle({ kind: 'failed', message: 'no answer nor final status reached this instance in time' }),
        deps.dialDeadlineMs ?? DIAL_DEADLINE_MS,
      );
      const settle = (outcome: DialOutcome) => {
        if (dials.get(request.callId)?.resolve !== settle) return;
        clearTimeout(deadline);
        dials.delete(request.callId);
        // A verdict kept for a call that never connected.
        if (outcome.kind !== 'answered') live.delete(request.callId);
        resolve(outcome);
      };
      dials.set(request.callId, { sid, resolve: settle });
      const hangUp = () => {
        void cancel(sid);
        settle({ kind: 'failed', message: 'hung up before it was answered' });
      };
      // A hang-up may have come while Twilio was creating the call: 'abort' has fired already.
      if (request.signal.aborted) hangUp();
      else request.signal.addEventListener('abort', hangUp, { once: true });
    });
  }

  /** The live call around a connected stream: transfer and hang-up through the REST API, the machine verdict when it comes. */
  function mediaOf(callId: string, stream: TwilioMediaStream): CallMedia {
    const sid = stream.start.callSid;
    const entry = liveOf(callId);
    stream.onClose(() => live.delete(callId));
    return {
      stream,
      answeredBy: 'human',
      onAnsweredBy(listener) {
        if (entry.verdict) listener(entry.verdict);
        else entry.listeners.push(listener);
      },
      async transfer(to) {
        stream.expectClose();
        const twiml = new (twilioSdk().twiml.VoiceResponse)();
        twiml.dial(to);
        await client.calls(sid).update({ twiml: twiml.toString() });
      },
      async hangup() {
        stream.expectClose();
        await client.calls(sid).update({ status: 'completed' });
        stream.close();
      },
    };
  }

  /** Hands a connected stream to the dial waiting for it; false when none waits in this process. */
  function answered(callId: string, media: CallMedia): boolean {
    const pending = dials.get(callId);
    if (!pending) return false;
    pending.resolve({ kind: 'answered', media });
    return true;
  }

  /** A final status before the answer settles the dial; answers whether one waited here. */
  function dialStatus(callId: string, status: CarrierCallStatus): boolean {
    const outcome = NOT_ANSWERED[status];
    const pending = dials.get(callId);
    if (!outcome || !pending) return false;
    pending.resolve(outcome);
    return true;
  }

  /**
   * The answering-machine verdict of a call this process dials or runs (it may come before or
   * after its stream connects); false for a call that is not here.
   */
  function answeredBy(callId: string, who: 'human' | 'machine'): boolean {
    if (!live.has(callId) && !dials.has(callId)) return false;
    const entry = liveOf(callId);
    entry.verdict = who;
    for (const listener of entry.listeners.splice(0)) listener(who);
    return true;
  }

  return {
    name: 'twilio' as const,
    simulated: false as const,
    // A caller id is one of the account's numbers; inbound calls come through the voice webhook.
    ownsCallerIds: true as const,
    inbound: false as const,
    dial,
    client,
    /** The account answers: the media health check. */
    probe: async () => void (await client.api.v2010.accounts(client.accountSid).fetch()),
    webhooks: createTwilioWebhooks({ client, base, mediaOf, answered, dialStatus, answeredBy }),

    /** The webhook addresses this deployment gives Twilio (its numbers ring them). */
    urls: {
      voice: `${base}${TWILIO_PATHS.voice}`,
      status: `${base}${TWILIO_PATHS.status}`,
    },

    /** Whether this process dialed `callId` and waits for it to be answered. */
    isDialing: (callId: string) => dials.has(callId),
    /** A status callback (Twilio's CallStatus): a final status before the answer settles the dial; answers whether one waited here. */
    statusChanged: (callId: string, callStatus: string) => dialStatus(callId, callStatusOf(callStatus)),
  };
}

export type TwilioTelephony = ReturnType<typeof createTwilioTelephony> & TelephonyProvider;
