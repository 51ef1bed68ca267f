// Ajv with allErrors checks every item of an array even when the array is already longer than
// its maxItems: a 1 MiB body of 200,000 wrong items made 200,000 errors (a 95 MB answer).
// Before compiling, every array schema with a maxItems is rewritten so that its other keywords
// apply only when the length is within bounds; an oversized array yields its one maxItems error.
// The OpenAPI document keeps the original schemas: this is only how they are checked.

type Schema = Record<string, unknown>;

const NESTED_ONE = ['items', 'not', 'if', 'then', 'else', 'contains', 'additionalProperties', 'propertyNames', 'additionalItems', 'unevaluatedItems', 'unevaluatedProperties'];
const NESTED_LIST = ['anyOf', 'oneOf', 'allOf', 'prefixItems'];
const NESTED_MAP = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function rewriteChildren(schema: Schema): Schema {
  const out: Schema = { ...schema };
  for (const key of NESTED_ONE) if (isSchema(schema[key])) out[key] = boundArrays(schema[key]);
  for (const key of NESTED_LIST) {
    if (Array.isArray(schema[key])) out[key] = (schema[key] as unknown[]).map((s) => (isSchema(s) ? boundArrays(s) : s));
  }
  for (const key of NESTED_MAP) {
    const map = schema[key];
    if (isSchema(map)) out[key] = Object.fromEntries(Object.entries(map).map(([k, s]) => [k, isSchema(s) ? boundArrays(s) : s]));
  }
  return out;
}

/** A copy of `schema` in which oversized arrays are refused by maxItems alone. */
export function boundArrays(schema: Schema): Schema {
  const rewritten = rewriteChildren(schema);
  if (typeof rewritten.maxItems !== 'number' || !('items' in rewritten || 'uniqueItems' in rewritten || 'contains' in rewritten)) {
    return rewritten;
  }
  const { maxItems, ...rest } = rewritten;
  // Keywords that are not about the array's items stay outside the condition.
  const { $id, title, description, default: fallback, examples, nullable, ...checks } = rest;
  const outer: Schema = { maxItems };
  for (const [key, value] of Object.entries({ $id, title, description, default: fallback, examples, nullable })) {
    if (value !== undefined) outer[key] = value;
  }
  // A JSON Schema if/then, not a thenable.
  // biome-ignore lint/suspicious/noThenProperty: the JSON Schema keyword
  return { ...outer, if: { maxItems }, then: checks };
}
