import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Platform } from '../../platform/platform.ts';
import { createWalletRepo } from '../wallet/repo.ts';
import { createWorkspacesRepo } from '../workspaces/repo.ts';
import { createUsersRepo } from './repo.ts';
import { LoginBody, RegisterBody, TokenPair, User } from './schemas.ts';
import { createAuthService } from './service.ts';

export function authRoutes(platform: Platform): FastifyPluginAsyncTypebox {
  const service = createAuthService({
    ...platform,
    users: createUsersRepo(),
    workspaces: createWorkspacesRepo(),
    wallet: createWalletRepo(),
  });

  return async (app) => {
    app.post(
      '/v1/auth/register',
      {
        schema: {
          operationId: 'register',
          summary: 'Create an account, its personal workspace and wallet (with the signup credit)',
          tags: ['auth'],
          body: RegisterBody,
          response: { 201: User },
        },
        config: { access: { auth: 'public' } },
      },
      async (request, reply) => reply.code(201).send(await service.register(request.body)),
    );

    app.post(
      '/v1/auth/login',
      {
        schema: {
          operationId: 'login',
          summary: 'Exchange email and password for an access token and a refresh token',
          tags: ['auth'],
          body: LoginBody,
          response: { 200: TokenPair },
        },
        config: { access: { auth: 'public' } },
      },
      async (request) => service.login(request.body, { ip: request.ip, userAgent: request.headers['user-agent'] ?? null }),
    );
  };
}
