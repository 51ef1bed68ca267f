import type { CallEvent, CallMedia, CarrierCallStatus, CarrierRequest, CarrierWebhookDescription, CarrierWebhooks, StatusCallback, VoiceWebhook } from '../../../ports/telephony.ts';
import { type TwilioClient, twilioSdk } from './client.ts';
import { openTwilioMediaStream, type TwilioMediaStream } from './media.ts';

// Twilio's side of its webhooks and Media Streams (DESIGN "Twilio"): X-Twilio-Signature checked
// with the SDK over the public address Twilio called, TwiML answers (<Connect><Stream> with the
// call's single-use token as a <Parameter>, or <Hangup>), Twilio's call statuses and
// answering-machine verdicts as the port's call events, and the Media Stream's `start`. The
// telephony module serves the routes and keeps the call journal.

export const TWILIO_WEBHOOKS: CarrierWebhookDescription = {
  carrier: 'twilio',
  displayName: 'Twilio',
  operationIds: { voice: 'twilioVoiceWebhook', status: 'twilioStatusCallback', stream: 'twilioMediaStream' },
  summaries: {
    voice: "Twilio's voice webhook: answers an inbound call on an assigned number, or an answered outbound call, with <Connect><Stream> TwiML (X-Twilio-Signature verified)",
    status: "Twilio's status callbacks and asynchronous answering-machine verdicts, mapped onto the call (X-Twilio-Signature verified)",
  },
  paramsDescription: "Twilio's request parameters (application/x-www-form-urlencoded: CallSid, From, To, CallStatus, AnsweredBy …)",
  signatureHeader: { name: 'X-Twilio-Signature', description: "Twilio's signature of the URL and parameters" },
  voiceResponse: { type: 'text/xml', description: 'TwiML' },
};

export const TWILIO_PATHS = {
  voice: `/v1/telephony/${TWILIO_WEBHOOKS.carrier}/voice`,
  status: `/v1/telephony/${TWILIO_WEBHOOKS.carrier}/status`,
  stream: `/v1/telephony/${TWILIO_WEBHOOKS.carrier}/stream`,
} as const;

/** Twilio's AnsweredBy values: a person, or a machine (with or without the end of its message heard). */
export function answeredByOf(value: string | undefined): 'human' | 'machine' | null {
  if (!value) return null;
  if (value === 'human') return 'human';
  if (value.startsWith('machine') || value === 'fax') return 'machine';
  return null;
}

const FINAL: Record<string, CarrierCallStatus> = { busy: 'busy', 'no-answer': 'no_answer', failed: 'failed', canceled: 'canceled', completed: 'completed' };

/** Twilio's CallStatus as the port's: its final statuses, `progress` for queued, ringing, in-progress … */
export function callStatusOf(value: string | undefined): CarrierCallStatus {
  return (value && FINAL[value]) || 'progress';
}

export interface TwilioWebhooksDeps {
  client: TwilioClient;
  /** The address Twilio reaches this deployment at (PUBLIC_BASE_URL), without a trailing slash. */
  base: string;
  /** The adapter's calls: a connected stream's live call, the dial waiting for it, events for either. */
  mediaOf(callId: string, stream: TwilioMediaStream): CallMedia;
  answered(callId: string, media: CallMedia): boolean;
  dialStatus(callId: string, status: CarrierCallStatus): boolean;
  answeredBy(callId: string, who: 'human' | 'machine'): boolean;
}

export function createTwilioWebhooks(deps: TwilioWebhooksDeps): CarrierWebhooks {
  const { client, base } = deps;
  const streamUrl = `${base.replace(/^http/, 'ws')}${TWILIO_PATHS.stream}`;
  const signatureHeader = TWILIO_WEBHOOKS.signatureHeader.name.toLowerCase();

  return {
    description: TWILIO_WEBHOOKS,

    verify(request, kind) {
      const token = client.password;
      const signature = request.headers[signatureHeader];
      if (!token || typeof signature !== 'string') return false;
      // Twilio signs the address it called: this deployment's public address (wss:// for the stream), whatever proxy is between.
      const url = `${kind === 'stream' ? base.replace(/^http/, 'ws') : base}${request.url}`;
      return twilioSdk().validateRequest(token, signature, url, request.params);
    },

    voice(request: CarrierRequest): VoiceWebhook {
      const { CallSid: carrierCallId, From, To } = request.params;
      if (!carrierCallId) return { kind: 'unknown' };
      if (request.callId) return { kind: 'answered', carrierCallId, callId: request.callId };
      return { kind: 'inbound', carrierCallId, from: From ?? '', to: To ?? '' };
    },

    connect(callId, token) {
      const response = new (twilioSdk().twiml.VoiceResponse)();
      const stream = response.connect().stream({ url: streamUrl });
      stream.parameter({ name: 'call_id', value: callId });
      stream.parameter({ name: 'token', value: token });
      return response.toString();
    },

    reject(say) {
      const response = new (twilioSdk().twiml.VoiceResponse)();
      if (say) response.say(say);
      response.hangup();
      return response.toString();
    },

    status(request): StatusCallback {
      const { params } = request;
      const verdict = answeredByOf(params.AnsweredBy);
      const event: CallEvent = verdict ? { kind: 'answered_by', who: verdict } : { kind: 'status', status: callStatusOf(params.CallStatus) };
      return { callId: request.callId, carrierCallId: params.CallSid, event };
    },

    callEvent(callId, event) {
      if (event.kind === 'answered_by') {
        deps.answeredBy(callId, event.who);
        return false;
      }
      return deps.dialStatus(callId, event.status);
    },

    async acceptStream(socket, claim) {
      const stream = await openTwilioMediaStream(socket);
      if (!stream) {
        socket.close(1008, 'no stream start');
        return null;
      }
      const { call_id: callId, token } = stream.start.customParameters;
      const validAccount = stream.start.accountSid === client.accountSid;
      if (!validAccount || !callId || !token || !(await claim({ callId, token, carrierCallId: stream.start.callSid }))) {
        stream.expectClose();
        socket.close(1008, 'invalid stream token');
        return null;
      }
      const media = deps.mediaOf(callId, stream);
      // An outbound call this process dials: its dial takes the media.
      if (deps.answered(callId, media)) return null;
      return { callId, media };
    },
  };
}
