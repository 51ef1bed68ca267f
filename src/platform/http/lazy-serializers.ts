import { createRequire } from 'node:module';
import type { FastifyServerOptions } from 'fastify';

// Response serialisers compiled on a route's first response instead of at start-up. Fastify
// compiles every response schema of every route (fast-json-stringify: code generation) while it
// gets ready; with the problem+json entries every route has (openapi.ts) and the HEAD route of each
// GET, that was most of the time between the routes being registered and the server listening
// (docs/decisions.md, "Start-up"). Each serialiser is the one Fastify would have built, from
// Fastify's own factory; only the moment it is compiled moves.

type SerializerFactory = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']>;
type SerializerCompiler = ReturnType<SerializerFactory>;
type Serializer = ReturnType<SerializerCompiler>;

// Fastify's default factory, resolved from Fastify's own location: the version Fastify itself uses.
const fromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));
const defaultFactory = (fromFastify('@fastify/fast-json-stringify-compiler') as { SerializerSelector: () => SerializerFactory }).SerializerSelector();

/** Fastify's serializer factory, each serialiser it builds compiled when first called. */
export const lazySerializerFactory: SerializerFactory = (externalSchemas, options) => (route) => {
  let serialize: Serializer | undefined;
  return (doc) => {
    // A factory per compilation: Fastify's drops a schema's own $id from the shared options it
    // compiles with, so the order of compilation (now the order of first responses) must not matter.
    serialize ??= defaultFactory(externalSchemas, options)(route);
    return serialize(doc);
  };
};
