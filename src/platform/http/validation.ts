import type { FastifyInstance } from 'fastify';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';

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
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '') done(null, undefined);
    else json(request, body as string, done);
  });
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined && (request.method === 'POST' || request.method === 'PUT' || request.method === 'PATCH')) request.body = {};
  });
  const strict = makeAjv(false);
  const coercing = makeAjv(true);
  // Ajv caches compiled functions by schema, so shared schemas (ListQuery ...) compile once.
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? strict : coercing).compile(schema as object));
}
