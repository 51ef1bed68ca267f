import type { AgentFunction, AgentUpdate } from '../../../../../sdks/typescript/src/index.ts';

// An agent function (a webhook tool) as the editor holds it: its JSON Schema as the text typed,
// checked as it is typed (JSON first, then the shape of an arguments schema), and an example
// arguments object built from a schema for the "test function" form.

export const FUNCTION_METHODS = ['POST', 'GET', 'PUT', 'PATCH', 'DELETE'] as const;
export type FunctionMethod = (typeof FUNCTION_METHODS)[number];

export interface FunctionDraft {
  /** The list's React key (not sent). */
  key: string;
  name: string;
  description: string;
  url: string;
  method: FunctionMethod;
  parameters: string;
  timeout_ms: string;
}

let lastKey = 0;
export const nextKey = () => `item-${++lastKey}`;

export const EMPTY_SCHEMA = '{\n  "type": "object",\n  "properties": {}\n}';

export function newFunctionDraft(): FunctionDraft {
  return { key: nextKey(), name: '', description: '', url: '', method: 'POST', parameters: EMPTY_SCHEMA, timeout_ms: '5000' };
}

export function functionDraftOf(fn: AgentFunction): FunctionDraft {
  return { key: nextKey(), name: fn.name, description: fn.description, url: fn.url, method: fn.method, parameters: JSON.stringify(fn.parameters, null, 2), timeout_ms: String(fn.timeout_ms) };
}

const JSON_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object', 'null']);
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function typeProblem(type: unknown, where: string): string | undefined {
  const types = Array.isArray(type) ? type : [type];
  const unknown = types.find((t) => typeof t !== 'string' || !JSON_TYPES.has(t));
  return unknown === undefined ? undefined : `${where}: ${JSON.stringify(unknown)} is not a JSON Schema type (string, number, integer, boolean, array, object, null)`;
}

function propertiesProblem(properties: unknown): string | undefined {
  if (!isObject(properties)) return '"properties" must be an object of schemas';
  for (const [name, schema] of Object.entries(properties)) {
    if (!isObject(schema)) return `"properties.${name}" must be a schema object, such as {"type": "string"}`;
    if (schema.type !== undefined) {
      const problem = typeProblem(schema.type, `"properties.${name}.type"`);
      if (problem) return problem;
    }
  }
  return undefined;
}

/** The arguments schema the text holds, or what is wrong with it (a JSON parse error first). */
export function checkSchema(text: string): { schema?: Record<string, unknown>; error?: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { error: `Not valid JSON: ${(error as Error).message}` };
  }
  if (!isObject(parsed)) return { error: 'The schema must be a JSON object, such as {"type": "object", "properties": {}}' };
  if (parsed.type !== undefined && parsed.type !== 'object') return { error: 'The arguments are an object: "type" must be "object"' };
  if (parsed.properties !== undefined) {
    const problem = propertiesProblem(parsed.properties);
    if (problem) return { error: problem };
  }
  if (parsed.required !== undefined && !(Array.isArray(parsed.required) && parsed.required.every((r) => typeof r === 'string'))) {
    return { error: '"required" must be an array of property names' };
  }
  return { schema: parsed };
}

function exampleOf(schema: Record<string, unknown>): unknown {
  if ('default' in schema) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (type === 'string') return '';
  if (type === 'number' || type === 'integer') return 0;
  if (type === 'boolean') return false;
  if (type === 'array') return [];
  if (type === 'object') return isObject(schema.properties) ? exampleArguments(schema) : {};
  return null;
}

/** An arguments object with one placeholder per property of the schema. */
export function exampleArguments(schema: Record<string, unknown>): Record<string, unknown> {
  const properties = isObject(schema.properties) ? schema.properties : {};
  return Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, isObject(property) ? exampleOf(property) : null]));
}

/** The functions as the API takes them; problems go to `errors` under `functions.<i>.<field>`. */
export function functionsOf(drafts: FunctionDraft[], errors: Record<string, string>): NonNullable<AgentUpdate['functions']> {
  return drafts.map((draft, i) => {
    const at = (field: string) => `functions.${i}.${field}`;
    if (draft.name.trim() === '') errors[at('name')] = 'Name the function (letters, digits and _)';
    if (draft.url.trim() === '') errors[at('url')] = 'Enter the URL the function calls';
    const { schema, error } = checkSchema(draft.parameters);
    if (error) errors[at('parameters')] = error;
    const timeout = /^\s*\d+\s*$/.test(draft.timeout_ms) ? Number(draft.timeout_ms) : undefined;
    if (timeout === undefined) errors[at('timeout_ms')] = 'Enter a whole number of milliseconds';
    return { name: draft.name.trim(), description: draft.description, url: draft.url.trim(), method: draft.method, parameters: schema ?? {}, timeout_ms: timeout };
  });
}
