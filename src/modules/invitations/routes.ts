import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Platform } from '../../platform/platform.ts';

// Placeholder: the routes of this module are being written.
export function invitationsRoutes(_platform: Platform): FastifyPluginAsyncTypebox {
  return async () => {};
}
