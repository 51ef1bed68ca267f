import type { FastifyInstance } from 'fastify';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { boundArrays } from './array-bounds.ts';
import { assertAcceptableBody } from './input-guard.ts';

// Request validation: bodies are validated strictly (no type coercion, unknown fields rejected by
// their schemas' additionalProperties: false, nothing silently removed); query strings, path
// parameters and headers are coerced to their declared types, as DESIGN part 4 says.

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    removeAdditional: false,
    strict: false,
  });
  addFormats(ajv);
  return ajv;
}

type DataValidationCxt = Parameters<ValidateFunction>[1];

/** An Ajv validator compiled when first called (see `cachedCompiler`). */
interface LazyValidator {
  (data: unknown, context?: DataValidationCxt): boolean;
  errors?: ValidateFunction['errors'];
  /** Always set: Fastify then passes the request as the parent, as it does to a compiled Ajv function. */
  schemaEnv: true;
}

/**
 * Compiles each schema object once (shared schemas such as ListQuery serve many routes), on the
 * first request that needs it: Fastify asks for every route's validators while it gets ready, and
 * compiling them all then was a large part of the start-up (docs/decisions.md, "Start-up").
 */
function cachedCompiler(ajv: Ajv) {
  const compiled = new WeakMap<object, LazyValidator>();
  return (schema: Record<string, unknown>): LazyValidator => {
    let lazy = compiled.get(schema);
    if (!lazy) {
      let validate: ValidateFunction | undefined;
      const run = ((data: unknown, context?: DataValidationCxt) => {
        validate ??= ajv.compile(boundArrays(schema));
        const valid = validate(data, context);
        run.errors = validate.errors;
        return valid;
      }) as LazyValidator;
      run.schemaEnv = true;
      lazy = run;
      compiled.set(schema, lazy);
    }
    return lazy;
  };
}

export function registerValidation(app: FastifyInstance) {
  // Bodies are JSON (a module that takes another type, such as multipart, registers its parser).
  // Fastify's default text/plain parser would hand a string to the JSON schema, turning a wrong
  // Content-Type into a confusing 422 instead of 415 unsupported_media_type.
  app.removeContentTypeParser('text/plain');
  // A POST, PUT or PATCH without a body is validated as `{}`: an operation that takes no body
  // (logout, rotate-secret) needs none, and one with required fields names them (`email: is
  // required`) rather than answering "body: must be object". An empty body sent as
  // application/json counts as no body (many clients send the header on every request).
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  // A parsed body with U+0000 anywhere or nested deeper than the platform takes is refused here,
  // before any schema or code walks it (input-guard.ts).
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '') return done(null, undefined);
    json(request, body as string, (error: Error | null, parsed?: unknown) => {
      if (error) return done(error);
      try {
        assertAcceptableBody(parsed);
      } catch (refused) {
        return done(refused as Error);
      }
      done(null, parsed);
    });
  });
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined && (request.method === 'POST' || request.method === 'PUT' || request.method === 'PATCH')) request.body = {};
  });
  const strict = cachedCompiler(makeAjv(false));
  const coercing = cachedCompiler(makeAjv(true));
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? strict : coercing)(schema as Record<string, unknown>));
}
