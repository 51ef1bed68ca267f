import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { BlobStore } from '../../ports/blobs.ts';
import type { CallReads } from './reads.ts';
import { callControlRoutes } from './routes/control.ts';
import { callReadRoutes } from './routes/read.ts';
import type { CallsService } from './service.ts';

// The calls API: 12 operations on calls plus the sandbox's inbound call.
export function callsRoutes(deps: { service: CallsService; reads: CallReads; blobs: BlobStore }): FastifyPluginAsyncTypebox {
  return async (app) => {
    await app.register(callReadRoutes({ reads: deps.reads, blobs: deps.blobs }));
    await app.register(callControlRoutes(deps.service, deps.reads.present));
  };
}
