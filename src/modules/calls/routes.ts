import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { CallsModule } from './module.ts';
import { presentCall } from './repo.ts';
import { callControlRoutes } from './routes/control.ts';
import { callReadRoutes } from './routes/read.ts';

// The calls API: 12 operations on calls plus the sandbox's inbound call.
export function callsRoutes(calls: CallsModule): FastifyPluginAsyncTypebox {
  return async (app) => {
    await app.register(callReadRoutes({ repo: calls.repo, blobs: calls.blobs, links: calls.links, removeContent: calls.removeContent }));
    await app.register(callControlRoutes(calls.service, (row) => presentCall(row, calls.links)));
  };
}
