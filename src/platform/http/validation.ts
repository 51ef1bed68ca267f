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
  const strict = makeAjv(false);
  const coercing = makeAjv(true);
  // Ajv caches compiled functions by schema, so shared schemas (ListQuery ...) compile once.
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? strict : coercing).compile(schema as object));
}
