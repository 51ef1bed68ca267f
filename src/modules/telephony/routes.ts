import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { assertAcceptableBody } from '../../platform/http/input-guard.ts';
import { mediaBody } from '../../platform/http/schemas.ts';
import { AppError } from '../../platform/errors.ts';
import type { Platform } from '../../platform/platform.ts';
import { TWILIO_PATHS, type TwilioTelephony } from '../../providers/telephony/twilio.ts';
import { twilioSdk } from '../../providers/telephony/twilio-client.ts';
import type { CallsModule } from '../calls/module.ts';
import { createTwilioService, type TwilioParams } from './twilio-service.ts';

// Twilio's callbacks (DESIGN "Twilio"): the voice webhook, status callbacks and the Media Streams
// WebSocket. Public (Twilio has no API key) but each request is verified: the webhooks by
// X-Twilio-Signature over PUBLIC_BASE_URL + the path (the address Twilio called, also behind a
// TLS proxy), the stream by the single-use token of its <Parameter>s.

const tags = ['telephony'];
const twilioAccess = { access: { auth: 'public', limit: 'none' } } as const;

const TwilioForm = Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 4096 }), {
  maxProperties: 200,
  description: "Twilio's request parameters (application/x-www-form-urlencoded: CallSid, From, To, CallStatus, AnsweredBy …)",
});
const CallQuery = Type.Object({ call_id: Type.Optional(Type.String({ maxLength: 64, description: 'Our call id, on the callbacks of outbound calls' })) }, { additionalProperties: false });
const TwiML = mediaBody('text/xml', 'TwiML');
const SignatureHeaders = Type.Object({ 'x-twilio-signature': Type.Optional(Type.String({ maxLength: 512, description: "Twilio's signature of the URL and parameters" })) });

export function telephonyRoutes(platform: Platform, calls: CallsModule): FastifyPluginAsyncTypebox {
  const { config } = platform;
  const telephony = platform.providers.telephony;
  // The Twilio telephony is the Twilio adapter (providers/index.ts builds it), whose webhooks and
  // Media Streams this module serves; the port's type does not name it (issue 30: to move behind a port).
  const service = telephony.name === 'twilio' ? createTwilioService(platform, calls, telephony as TwilioTelephony) : null;

  /** The request's parameters once its X-Twilio-Signature is proven; 403 and nothing done otherwise. */
  function verified(request: FastifyRequest, base = config.publicBaseUrl): { service: NonNullable<typeof service>; params: TwilioParams } {
    const token = config.twilio.authToken;
    if (!service || !token) throw new AppError('invalid_signature', 'Twilio is not the telephony provider of this deployment (TELEPHONY_PROVIDER=twilio)');
    const signature = request.headers['x-twilio-signature'];
    const params = (request.body ?? {}) as TwilioParams;
    // Twilio signs the address it called: this deployment's public address, whatever proxy is between.
    const url = `${base}${request.url}`;
    if (typeof signature !== 'string' || !twilioSdk().validateRequest(token, signature, url, params)) {
      throw new AppError('invalid_signature', 'X-Twilio-Signature does not match this request');
    }
    return { service, params };
  }

  return async (app) => {
    // Twilio posts forms; parsed here only (the rest of the API takes JSON).
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 64 * 1024 }, (_request, body, done) => {
      const params: Record<string, string> = {};
      for (const [key, value] of new URLSearchParams(body as string)) params[key] = value;
      try {
        assertAcceptableBody(params);
      } catch (refused) {
        return done(refused as Error);
      }
      done(null, params);
    });

    app.post(
      TWILIO_PATHS.voice,
      {
        schema: {
          operationId: 'twilioVoiceWebhook',
          summary: "Twilio's voice webhook: answers an inbound call on an assigned number, or an answered outbound call, with <Connect><Stream> TwiML (X-Twilio-Signature verified)",
          tags,
          consumes: ['application/x-www-form-urlencoded'],
          headers: SignatureHeaders,
          querystring: CallQuery,
          body: TwilioForm,
          response: { 200: TwiML },
        },
        config: twilioAccess,
      },
      async (request, reply) => {
        const { service: twilioService, params } = verified(request);
        const twiml = await twilioService.voice(params, request.query.call_id);
        return reply.type('text/xml').send(twiml);
      },
    );

    app.post(
      TWILIO_PATHS.status,
      {
        schema: {
          operationId: 'twilioStatusCallback',
          summary: "Twilio's status callbacks and asynchronous answering-machine verdicts, mapped onto the call (X-Twilio-Signature verified)",
          tags,
          consumes: ['application/x-www-form-urlencoded'],
          headers: SignatureHeaders,
          querystring: CallQuery,
          body: TwilioForm,
          response: { 204: Type.Null({ description: 'Taken' }) },
        },
        config: twilioAccess,
      },
      async (request, reply) => {
        const { service: twilioService, params } = verified(request);
        await twilioService.status(params, request.query.call_id);
        return reply.code(204).send(null);
      },
    );

    // The Media Streams WebSocket: not an HTTP operation (kept out of openapi.json).
    // Refused before the upgrade unless Twilio signed the handshake (over the wss:// address); the
    // stream must then present its call's single-use token.
    const streamBase = config.publicBaseUrl.replace(/^http/, 'ws');
    app.get(
      TWILIO_PATHS.stream,
      { websocket: true, schema: { hide: true, operationId: 'twilioMediaStream' }, config: twilioAccess, preValidation: async (request) => void verified(request, streamBase) },
      (socket) => {
        if (!service) return socket.close(1008, 'Twilio is not the telephony provider of this deployment');
        void service.stream(socket).catch((error) => {
          platform.logger.error({ err: error }, 'twilio media stream failed');
          socket.close(1011);
        });
      },
    );
  };
}
