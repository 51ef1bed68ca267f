import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { userOf } from '../../platform/auth/authenticate.ts';
import { IdParams, ListOf, ListQuery, NoContent } from '../../platform/http/schemas.ts';
import { pageRequest } from '../../platform/pagination.ts';
import {
  Accepted,
  ChangePasswordBody,
  ForgotPasswordBody,
  LoginBody,
  RefreshBody,
  RegisterBody,
  ResetPasswordBody,
  Session,
  TokenPair,
  UpdateMeBody,
  User,
  VerifyEmailBody,
} from './schemas.ts';
import type { AuthService } from './service.ts';

export function authRoutes(service: AuthService): FastifyPluginAsyncTypebox {
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

    app.post(
      '/v1/auth/refresh',
      {
        schema: {
          operationId: 'refreshToken',
          summary: 'Exchange a refresh token for a new token pair (the refresh token is rotated; reusing an old one ends the session)',
          tags: ['auth'],
          body: RefreshBody,
          response: { 200: TokenPair },
        },
        config: { access: { auth: 'public' } },
      },
      async (request) => service.refresh(request.body),
    );

    app.post(
      '/v1/auth/logout',
      {
        schema: {
          operationId: 'logout',
          summary: 'End the current session: its access and refresh tokens stop working at once',
          tags: ['auth'],
          response: { 204: NoContent },
        },
        config: { access: { auth: 'user' } },
      },
      async (request, reply) => {
        const user = userOf(request);
        await service.logout(user.userId, user.sessionId);
        return reply.code(204).send(null);
      },
    );

    app.get(
      '/v1/auth/me',
      {
        schema: { operationId: 'getMe', summary: 'The user of the access token', tags: ['auth'], response: { 200: User } },
        config: { access: { auth: 'user' } },
      },
      async (request) => service.me(userOf(request).userId),
    );

    app.patch(
      '/v1/auth/me',
      {
        schema: {
          operationId: 'updateMe',
          summary: 'Change your name or email address (a new address needs current_password and is verified again)',
          tags: ['auth'],
          body: UpdateMeBody,
          response: { 200: User },
        },
        config: { access: { auth: 'user' } },
      },
      async (request) => service.updateMe(userOf(request).userId, request.body),
    );

    app.post(
      '/v1/auth/password',
      {
        schema: {
          operationId: 'changePassword',
          summary: 'Change your password; every other session is signed out (a wrong current password is 422)',
          tags: ['auth'],
          body: ChangePasswordBody,
          response: { 204: NoContent },
        },
        config: { access: { auth: 'user' } },
      },
      async (request, reply) => {
        const user = userOf(request);
        await service.changePassword(user.userId, user.sessionId, request.body);
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/v1/auth/password/forgot',
      {
        schema: {
          operationId: 'forgotPassword',
          summary: 'Mail a password-reset link (valid 1 hour); answers 202 whether or not the address has an account',
          tags: ['auth'],
          body: ForgotPasswordBody,
          response: { 202: Accepted },
        },
        config: { access: { auth: 'public' } },
      },
      async (request, reply) => {
        await service.forgotPassword(request.body);
        return reply.code(202).send({ message: 'If an account exists for this address, a reset link has been mailed to it.' });
      },
    );

    app.post(
      '/v1/auth/password/reset',
      {
        schema: {
          operationId: 'resetPassword',
          summary: 'Set a new password with a mailed reset token (single use); every session is signed out',
          tags: ['auth'],
          body: ResetPasswordBody,
          response: { 204: NoContent },
        },
        config: { access: { auth: 'public' } },
      },
      async (request, reply) => {
        await service.resetPassword(request.body);
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/v1/auth/verify-email',
      {
        schema: {
          operationId: 'verifyEmail',
          summary: 'Confirm the email address with a mailed verification token (single use, 7 days)',
          tags: ['auth'],
          body: VerifyEmailBody,
          response: { 200: User },
        },
        config: { access: { auth: 'public' } },
      },
      async (request) => service.verifyEmail(request.body),
    );

    app.post(
      '/v1/auth/verify-email/resend',
      {
        schema: {
          operationId: 'resendVerification',
          summary: 'Mail a new verification link (409 when the address is already verified)',
          tags: ['auth'],
          response: { 202: Accepted },
        },
        config: { access: { auth: 'user' } },
      },
      async (request, reply) => {
        const email = await service.resendVerification(userOf(request).userId);
        return reply.code(202).send({ message: `A verification link has been mailed to ${email}.` });
      },
    );

    app.get(
      '/v1/auth/sessions',
      {
        schema: {
          operationId: 'listSessions',
          summary: 'Your active sessions, newest first; `current` marks the one making this request',
          tags: ['auth'],
          querystring: ListQuery,
          response: { 200: ListOf(Session, 'SessionList') },
        },
        config: { access: { auth: 'user' } },
      },
      async (request) => {
        const user = userOf(request);
        return service.listSessions(user.userId, user.sessionId, pageRequest(request.query));
      },
    );

    app.delete(
      '/v1/auth/sessions/:id',
      {
        schema: {
          operationId: 'revokeSession',
          summary: 'Sign out one of your sessions (404 for an unknown, ended or foreign session)',
          tags: ['auth'],
          params: IdParams('Session id (ses_…)'),
          response: { 204: NoContent },
        },
        config: { access: { auth: 'user' } },
      },
      async (request, reply) => {
        await service.revokeSession(userOf(request).userId, request.params.id);
        return reply.code(204).send(null);
      },
    );
  };
}
