// Decodes Stripe's request encoding for the fake Stripe server. Stripe's v1 API takes
// application/x-www-form-urlencoded bodies (and query strings) whose keys nest with brackets:
// `metadata[payment_id]=pay_1`, `automatic_payment_methods[enabled]=true`, and arrays as
// `payment_method_types[0]=card` (the SDK always writes indices; `[]` is accepted too).
// Every leaf stays a string, as on the wire: the routes coerce and validate like Stripe does.

export type FormValue = string | FormValue[] | FormObject;
export interface FormObject {
  [key: string]: FormValue;
}

/** A malformed form body, answered as Stripe's 400 invalid_request_error. */
export class FormDecodeError extends Error {
  constructor(
    message: string,
    readonly param: string,
  ) {
    super(message);
  }
}

// Keys that would reach Object.prototype when used as property names on plain objects.
const FORBIDDEN_KEYS = new Set(['__proto__', 'prototype', 'constructor']);

function keyPath(rawKey: string): string[] {
  const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(rawKey);
  if (!match) throw new FormDecodeError(`Invalid parameter name: ${rawKey}`, rawKey);
  const nested = [...match[2].matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1]);
  const path = [match[1], ...nested];
  if (path.some((segment) => FORBIDDEN_KEYS.has(segment))) throw new FormDecodeError(`Invalid parameter name: ${rawKey}`, rawKey);
  return path;
}

function assign(root: FormObject, path: string[], value: string, rawKey: string): void {
  let node: FormObject = root;
  for (const [index, segment] of path.entries()) {
    // `[]` appends: it becomes the next free numeric index of that node.
    const key = segment === '' ? String(Object.keys(node).length) : segment;
    if (index === path.length - 1) {
      if (typeof node[key] === 'object') throw new FormDecodeError(`Invalid hash: ${rawKey} is both a value and a hash`, rawKey);
      node[key] = value;
      return;
    }
    const child = node[key];
    if (typeof child === 'string') throw new FormDecodeError(`Invalid hash: ${rawKey} is both a value and a hash`, rawKey);
    if (child === undefined) node[key] = {};
    node = node[key] as FormObject;
  }
}

// Objects whose keys are all indices (0, 1, …) were arrays on the client.
function arraysFromIndexedObjects(value: FormValue): FormValue {
  if (typeof value === 'string' || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  const converted: FormObject = {};
  for (const key of keys) converted[key] = arraysFromIndexedObjects(value[key]);
  if (keys.length > 0 && keys.every((key) => /^\d+$/.test(key))) {
    return keys.sort((a, b) => Number(a) - Number(b)).map((key) => converted[key]);
  }
  return converted;
}

export function decodeStripeForm(encoded: string): FormObject {
  const root: FormObject = {};
  for (const [rawKey, value] of new URLSearchParams(encoded)) assign(root, keyPath(rawKey), value, rawKey);
  return arraysFromIndexedObjects(root) as FormObject;
}

/** A stable text of the parameters (keys sorted), to compare a retried request with the first. */
export function canonicalParams(value: FormValue): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalParams).join(',')}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalParams(value[key])}`).join(',')}}`;
}
