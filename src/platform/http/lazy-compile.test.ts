import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Fastify from 'fastify';
import { lazySerializerFactory } from './lazy-serializers.ts';
import { registerValidation } from './validation.ts';

// Route validators and response serialisers are compiled on first use, not while the app gets
// ready (start-up): a schema that cannot compile shows only when its route is called, and those
// that compile behave as Fastify's own.

function app() {
  const fastify = Fastify({ logger: false, schemaController: { compilersFactory: { buildSerializer: lazySerializerFactory } } });
  registerValidation(fastify);
  return fastify;
}

describe('schemas compiled on first use', () => {
  it('gets ready without compiling a body schema; the first request compiles it', async () => {
    const fastify = app();
    fastify.post('/broken', { schema: { body: { $ref: 'nowhere#' } } }, async () => ({ ok: true }));
    fastify.post('/fine', { schema: { body: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'], additionalProperties: false } } }, async (request) => request.body);
    await fastify.ready();
    const broken = await fastify.inject({ method: 'POST', url: '/broken', payload: {} });
    assert.equal(broken.statusCode, 500);
    const refused = await fastify.inject({ method: 'POST', url: '/fine', payload: { n: 'x' } });
    assert.equal(refused.statusCode, 400);
    assert.match(refused.json().message, /body\/n must be integer/);
    const accepted = await fastify.inject({ method: 'POST', url: '/fine', payload: { n: 2 } });
    assert.deepEqual(accepted.json(), { n: 2 });
    await fastify.close();
  });

  it('coerces query strings as a compiled validator does, from the first request on', async () => {
    const fastify = app();
    fastify.get('/q', { schema: { querystring: { type: 'object', properties: { limit: { type: 'integer', default: 20 }, tags: { type: 'array', items: { type: 'string' } } } } } }, async (request) => request.query);
    await fastify.ready();
    assert.deepEqual((await fastify.inject({ url: '/q?limit=5&tags=a' })).json(), { limit: 5, tags: ['a'] });
    assert.deepEqual((await fastify.inject({ url: '/q' })).json(), { limit: 20 });
    await fastify.close();
  });

  it('gets ready without compiling a response schema; the first response compiles it', async () => {
    const fastify = app();
    fastify.get('/broken', { schema: { response: { 200: { $ref: 'nowhere#' } } } }, async () => ({ ok: true }));
    fastify.get('/fine', { schema: { response: { 200: { type: 'object', properties: { kept: { type: 'string' } } } } } }, async () => ({ kept: 'yes', dropped: 'no' }));
    await fastify.ready();
    assert.equal((await fastify.inject({ url: '/broken' })).statusCode, 500);
    // The allow-list still applies: a field the schema does not name is not sent.
    assert.equal((await fastify.inject({ url: '/fine' })).body, '{"kept":"yes"}');
    await fastify.close();
  });
});
