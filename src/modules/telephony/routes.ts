import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { assertAcceptableBody } from '../../platform/http/input-guard.ts';
import { mediaBody } from '../../platform/http/schemas.ts';
import { AppError } from '../../platform/errors.ts';
import type { CarrierRequest, CarrierWebhookDescription, CarrierWebhooks } from '../../ports/telephony.ts';
import type { TelephonyService } from './service.ts';

// The carriers' callbacks (DESIGN "Twilio"): for each registered carrier, its voice webhook, its
// status callbacks and its media stream WebSocket, at /v1/telephony/<carrier>/… (declared whichever
// carrier runs; only the running one's are answered). Public (a carrier has no API key) but each
// request is verified by the carrier's adapter: the webhooks by their signature over
// PUBLIC_BASE_URL + the path (the address the carrier called, also behind a TLS proxy), the stream
// by its signed handshake, then the single-use token it presents.

const tags = ['telephony'];
const carrierAccess = { access: { auth: 'public', limit: 'none' } } as const;
const CallQuery = Type.Object({ call_id: Type.Optional(Type.String({ maxLength: 64, description: 'Our call id, on the callbacks of outbound calls' })) }, { additionalProperties: false });

type App = Parameters<FastifyPluginAsyncTypebox>[0];
type Running = { webhooks: CarrierWebhooks; service: TelephonyService };

export interface TelephonyRouteDeps {
  /** Every registered carrier's webhook description: each gets its routes. */
  carriers: readonly CarrierWebhookDescription[];
  /** The deployment's carrier's webhooks and their service, when it has any. */
  running: Running | null;
  /** Where a failed media stream is logged. */
  logger: FastifyBaseLogger;
}

export function telephonyRoutes({ carriers, running, logger }: TelephonyRouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    // Carriers post forms; parsed here only (the rest of the API takes JSON).
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
    for (const carrier of carriers) carrierRoutes(app, logger, carrier, running?.webhooks.description.carrier === carrier.carrier ? running : null);
  };
}

/** One carrier's routes; `running`: its webhooks and service when it is this deployment's carrier. */
function carrierRoutes(app: App, logger: FastifyBaseLogger, carrier: CarrierWebhookDescription, running: Running | null) {
  const base = `/v1/telephony/${carrier.carrier}`;
  const header = carrier.signatureHeader.name.toLowerCase();
  const Form = Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 4096 }), { maxProperties: 200, description: carrier.paramsDescription });
  const SignatureHeaders = Type.Object({ [header]: Type.Optional(Type.String({ maxLength: 512, description: carrier.signatureHeader.description })) });
  const notRunning = `${carrier.displayName} is not the telephony provider of this deployment`;

  /** The carrier's request once its signature is proven; 403 and nothing done otherwise. */
  function verified(request: FastifyRequest, kind: 'webhook' | 'stream' = 'webhook') {
    if (!running) throw new AppError('invalid_signature', `${notRunning} (TELEPHONY_PROVIDER=${carrier.carrier})`);
    const { webhooks, service } = running;
    const query = request.query as { call_id?: string } | undefined;
    const carrierRequest: CarrierRequest = { url: request.url, headers: request.headers, params: (request.body ?? {}) as Record<string, string>, callId: query?.call_id };
    if (!webhooks.verify(carrierRequest, kind)) throw new AppError('invalid_signature', `${carrier.signatureHeader.name} does not match this request`);
    return { service, request: carrierRequest };
  }

  const webhook = { tags, consumes: ['application/x-www-form-urlencoded'], headers: SignatureHeaders, querystring: CallQuery, body: Form };

  app.post(
    `${base}/voice`,
    {
      schema: { operationId: carrier.operationIds.voice, summary: carrier.summaries.voice, ...webhook, response: { 200: mediaBody(carrier.voiceResponse.type, carrier.voiceResponse.description) } },
      config: carrierAccess,
    },
    async (request, reply) => {
      const { service: carrierService, request: carrierRequest } = verified(request);
      return reply.type(carrier.voiceResponse.type).send(await carrierService.voice(carrierRequest));
    },
  );

  app.post(
    `${base}/status`,
    {
      schema: { operationId: carrier.operationIds.status, summary: carrier.summaries.status, ...webhook, response: { 204: Type.Null({ description: 'Taken' }) } },
      config: carrierAccess,
    },
    async (request, reply) => {
      const { service: carrierService, request: carrierRequest } = verified(request);
      await carrierService.status(carrierRequest);
      return reply.code(204).send(null);
    },
  );

  // The media stream WebSocket: not an HTTP operation (kept out of openapi.json). Refused before
  // the upgrade unless the carrier signed the handshake; the stream must then present its call's
  // single-use token.
  app.get(
    `${base}/stream`,
    { websocket: true, schema: { hide: true, operationId: carrier.operationIds.stream }, config: carrierAccess, preValidation: async (request) => void verified(request, 'stream') },
    (socket) => {
      if (!running) return socket.close(1008, notRunning);
      void running.service.stream(socket).catch((error) => {
        logger.error({ err: error, carrier: carrier.carrier }, 'carrier media stream failed');
        socket.close(1011);
      });
    },
  );
}
