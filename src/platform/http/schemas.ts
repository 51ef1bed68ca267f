import { type TSchema, Type } from 'typebox';
import { ERROR_STATUS } from '../errors.ts';

// Shared schema pieces: the problem+json body, the error responses every route documents,
// list envelopes and the common query parameters. Written once; routes spread them.

export const ProblemSchema = Type.Object(
  {
    type: Type.String({ description: 'URI naming the error type' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.Union(
      Object.keys(ERROR_STATUS).map((code) => Type.Literal(code)),
      { description: 'Stable machine-readable error code' },
    ),
    request_id: Type.String(),
    errors: Type.Optional(
      Type.Array(Type.Object({ path: Type.String(), message: Type.String() }), {
        description: 'The fields at fault (at most 20; error_count then gives the total)',
      }),
    ),
    error_count: Type.Optional(Type.Integer({ description: 'How many field errors there were, when errors lists only the first 20' })),
  },
  { $id: 'Problem', title: 'Problem', description: 'RFC 9457 problem details' },
);

const problemRef = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: { $ref: 'Problem#' } } },
});

/**
 * The responses of a route: its success bodies plus the documented problem+json errors.
 * Keys are status codes; every route gets `4xx` and `5xx`, and `429` when it is rate limited.
 */
export function withErrors<const S extends Record<number, unknown>>(success: S, options: { limited?: boolean } = {}) {
  return {
    ...success,
    ...(options.limited === false ? {} : { 429: problemRef('Rate limit exceeded; see Retry-After') }),
    '4xx': problemRef('Client error (problem+json)'),
    '5xx': problemRef('Server error (problem+json)'),
  } as S;
}

export const Timestamp = Type.String({ format: 'date-time', examples: ['2026-11-23T10:00:00.000Z'] });
export const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const ListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Page size (1..100)' })),
  cursor: Type.Optional(Type.String({ maxLength: 200, description: 'Opaque cursor from next_cursor' })),
});

export function ListOf<T extends TSchema>(item: T, title: string) {
  return Type.Object(
    { data: Type.Array(item), has_more: Type.Boolean(), next_cursor: Type.Union([Type.String(), Type.Null()]) },
    { title },
  );
}

export const IdParams = (description: string) => Type.Object({ id: Type.String({ description, maxLength: 100 }) });

export const EmptyBody = Type.Object({}, { additionalProperties: false });

/**
 * A success body that is not JSON, documented under its real media type so that generators and
 * SDKs read it as bytes or text (OpenAPI only: the handler sends a string, Buffer or stream as is,
 * and Fastify serialises nothing for a non-JSON content type). `binary` for audio and the like.
 */
export function mediaBody(mediaType: string, description: string, options: { binary?: boolean } = {}) {
  const schema = options.binary ? { type: 'string', format: 'binary' } : { type: 'string' };
  return { description, content: { [mediaType]: { schema } } };
}

/** 204 No Content. */
export const NoContent = Type.Null({ description: 'No content' });
