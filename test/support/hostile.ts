import fc from 'fast-check';
import { type FormPart, multipartBody } from './multipart.ts';

// Arbitraries of hostile requests for the property-based test of every operation
// (test/hostile-input.fuzz.test.ts): each operation of the OpenAPI document gets path
// parameters, query strings and bodies shaped like its schemas but filled with what an attacker
// sends: wrong types, NUL and other control characters, lone surrogates, huge strings and arrays,
// deep nesting, prototype-pollution keys, broken JSON and broken multipart forms.

type Schema = Record<string, unknown>;

export interface Operation {
  method: string;
  path: string;
  operationId: string;
  queryParams: Array<{ name: string; schema: Schema }>;
  jsonBody?: Schema;
  multipart: boolean;
}

export interface HostileRequest {
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** Every operation of an OpenAPI 3.1 document, with what the arbitraries need of it. */
export function operationsOf(spec: { paths: Record<string, Record<string, Schema>> }): Operation[] {
  return Object.entries(spec.paths).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((m) => METHODS.includes(m))
      .map((method) => {
        const op = item[method] as {
          operationId: string;
          parameters?: Array<{ in: string; name: string; schema: Schema }>;
          requestBody?: { content: Record<string, { schema: Schema }> };
        };
        const content = op.requestBody?.content ?? {};
        return {
          method: method.toUpperCase(),
          path,
          operationId: op.operationId,
          queryParams: (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => ({ name: p.name, schema: p.schema })),
          jsonBody: content['application/json']?.schema,
          multipart: 'multipart/form-data' in content,
        };
      }),
  );
}

function nested(depth: number, leaf: unknown, asArray: boolean): unknown {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = asArray ? [value] : { a: value };
  return value;
}

function withOwnKey(key: string, value: unknown): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  return object;
}

const SPECIAL_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\u202e\u200b\ufeff',
  '\r\n\t\u0007\u001b[31m',
  "'; DROP TABLE users; --",
  '../../../../etc/passwd',
  '%00%2e%2e%2f',
  '{{7*7}}$' + '{7*7}',
  '<img src=x onerror=alert(1)>',
  '__proto__',
  'constructor',
  '1e999',
  '-0',
  'null',
  'http://[::127.0.0.1]:3799/',
  'http://169.254.169.254/latest/meta-data/',
  '😀'.repeat(50),
];

const HUGE_STRINGS = ['x'.repeat(200_000), '\u0000'.repeat(2_000), 'é'.repeat(60_000), '\ud800'.repeat(5_000)];

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.string({ maxLength: 40 }), weight: 3 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 40 }), weight: 3 },
  { arbitrary: fc.constantFrom(...SPECIAL_STRINGS), weight: 4 },
  { arbitrary: fc.constantFrom(...HUGE_STRINGS), weight: 1 },
);

const hostileNumber = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -1, 2 ** 53 + 1, -(2 ** 63), 1e308, 5e-324),
);

/** Any JSON value an attacker might send where something else is expected. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: hostileString, weight: 4 },
  { arbitrary: hostileNumber, weight: 2 },
  { arbitrary: fc.constantFrom(true, false, null), weight: 1 },
  { arbitrary: fc.array(hostileString, { maxLength: 5 }), weight: 1 },
  { arbitrary: fc.dictionary(hostileString, hostileString, { maxKeys: 4 }), weight: 1 },
  {
    arbitrary: fc.constantFrom(
      nested(40, 1, false),
      nested(500, 'deep', false),
      nested(300, null, true),
      Array.from({ length: 100_000 }, () => 'x'),
      Array.from({ length: 20_000 }, (_, i) => ({ i })),
      withOwnKey('__proto__', { polluted: true }),
      { constructor: { prototype: { polluted: true } } },
    ),
    weight: 1,
  },
);

function resolve(schema: Schema, components: Record<string, Schema>): Schema {
  const ref = schema.$ref;
  if (typeof ref !== 'string') return schema;
  const name = ref.replace(/^#\/components\/schemas\//, '').replace(/#$/, '');
  return components[name] ?? {};
}

function plausibleString(schema: Schema): fc.Arbitrary<string> {
  const examples = Array.isArray(schema.examples) ? (schema.examples as unknown[]).filter((e): e is string => typeof e === 'string') : [];
  const byFormat: Record<string, string[]> = {
    email: ['a@example.com', 'A@EXAMPLE.COM', 'a\u0000@example.com'],
    uri: ['https://example.com/hook', 'http://127.0.0.1:9/x', 'file:///etc/passwd'],
    'date-time': ['2026-11-23T10:00:00.000Z', '9999-12-31T23:59:59Z', '2026-02-30T00:00:00Z'],
  };
  const known = [...examples, ...(byFormat[String(schema.format)] ?? [])];
  return known.length > 0 ? fc.oneof(fc.constantFrom(...known), hostileString) : hostileString;
}

/** Values shaped by `schema`, each part sometimes replaced by a hostile value. */
export function valueFor(schema: Schema, components: Record<string, Schema>, depth = 0): fc.Arbitrary<unknown> {
  const plausible = plausibleFor(resolve(schema, components), components, depth);
  return fc.oneof({ arbitrary: plausible, weight: 4 }, { arbitrary: hostileValue, weight: 1 });
}

function plausibleFor(schema: Schema, components: Record<string, Schema>, depth: number): fc.Arbitrary<unknown> {
  if (depth > 4) return hostileValue;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return fc.constantFrom(...(schema.enum as unknown[]));
  if ('const' in schema) return fc.constant(schema.const);
  const alternatives = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (alternatives && alternatives.length > 0) return fc.oneof(...alternatives.map((s) => valueFor(s, components, depth + 1)));
  const type = Array.isArray(schema.type) ? (schema.type as string[]).find((x) => x !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      const known = fc.record(
        Object.fromEntries(Object.entries(properties).map(([k, s]) => [k, valueFor(s, components, depth + 1)])),
        { requiredKeys: [] },
      );
      if (!schema.additionalProperties) return known;
      return fc
        .tuple(known, fc.dictionary(hostileString, hostileValue, { maxKeys: 3 }))
        .map(([a, b]) => ({ ...b, ...(a as Record<string, unknown>) }));
    }
    case 'array':
      return fc.array(valueFor((schema.items ?? {}) as Schema, components, depth + 1), { maxLength: 4 });
    case 'string':
      return plausibleString(schema);
    case 'integer':
    case 'number':
      return hostileNumber;
    case 'boolean':
      return fc.boolean();
    default:
      return hostileValue;
  }
}

/** Body texts that are not what a JSON schema describes at all. */
const RAW_JSON_BODIES = [
  '{"a":',
  '{"a":1}}',
  `${'['.repeat(10_000)}${']'.repeat(10_000)}`,
  `${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}`,
  '{"__proto__":{"polluted":true}}',
  '{"constructor":{"prototype":{"polluted":true}}}',
  '"\\u0000"',
  '{"\\u0000":1}',
  'null',
  '[]',
  '1e309',
  '\ufeff{}',
];

/** Percent-encodes a string; a lone surrogate (which encodeURIComponent refuses) becomes its CESU-8 bytes. */
export function encodeComponent(value: string): string {
  let out = '';
  for (const ch of value) {
    try {
      out += encodeURIComponent(ch);
    } catch {
      out += '%ED%A0%80';
    }
  }
  return out;
}

/** Raw path segments (not encoded again): broken percent-encoding, NUL, traversal, over-long. */
const RAW_SEGMENTS = ['%00', '%E0%A4%A', '%', '%FF%FE', '..%2F..%2F', '%2e%2e', 'a'.repeat(300), '%F0%9F%98'];

/** A text file part named `file` under `boundary`, after one plain field if given. */
function filePart(boundary: string, filename: string, content: Buffer | string, extraField?: readonly [string, string]): Buffer {
  const field: FormPart[] = extraField ? [{ name: extraField[0], value: extraField[1] }] : [];
  return multipartBody([...field, { name: 'file', filename, contentType: 'text/plain', data: content }], boundary);
}

const hostileMultipart: fc.Arbitrary<{ payload: Buffer; contentType: string }> = fc.oneof(
  fc.constant({ payload: Buffer.from('hello'), contentType: 'multipart/form-data' }),
  fc.constant({ payload: filePart('foo', 'a.txt', 'hello'), contentType: 'multipart/form-data; boundary=bar' }),
  fc.constant({ payload: Buffer.from('--foo\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhel'), contentType: 'multipart/form-data; boundary=foo' }),
  fc.constant({ payload: Buffer.from('--foo\r\nGarbage header line\r\n\r\nx\r\n--foo--\r\n'), contentType: 'multipart/form-data; boundary=foo' }),
  fc
    .tuple(
      fc.oneof(fc.constantFrom('a.txt', 'b.md', 'c.html', 'd.csv', 'e.pdf', 'f.docx', 'g.bin', '.txt'), hostileString),
      hostileString,
      fc.option(fc.tuple(fc.constantFrom('title', 'type', '__proto__', 'unknown'), fc.oneof(fc.constant('Notes'), hostileString))),
    )
    .map(([filename, text, field]) => ({
      payload: filePart('b0undary', filename.replaceAll('"', '').replaceAll('\r', '').replaceAll('\n', ''), text, field ?? undefined),
      contentType: 'multipart/form-data; boundary=b0undary',
    })),
  fc.constant({ payload: filePart('b', 'a\u0000.txt', 'x\u0000y'), contentType: 'multipart/form-data; boundary=b' }),
);

/** A hostile request for `op`; `ids` are real ids of the caller's resources, mixed into path parameters. */
export function requestFor(op: Operation, components: Record<string, Schema>, ids: string[]): fc.Arbitrary<HostileRequest> {
  const names = [...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
  const segment = fc.oneof(
    { arbitrary: fc.constantFrom(...ids).map(encodeComponent), weight: 3 },
    { arbitrary: hostileString.map(encodeComponent), weight: 3 },
    { arbitrary: fc.constantFrom(...RAW_SEGMENTS), weight: 1 },
  );
  const params = fc.tuple(...names.map(() => segment));
  const query = fc.array(
    fc.tuple(
      op.queryParams.length > 0 ? fc.oneof(fc.constantFrom(...op.queryParams.map((p) => p.name)), hostileString) : hostileString,
      fc.oneof(hostileString, hostileNumber.map(String)),
    ),
    { maxLength: 3 },
  );
  const body = bodyFor(op, components);
  return fc.tuple(params, query, body).map(([values, pairs, payload]) => {
    let url = op.path;
    names.forEach((name, i) => {
      url = url.replace(`{${name}}`, values[i] ?? 'x');
    });
    if (pairs.length > 0) url += `?${pairs.map(([k, v]) => `${encodeComponent(k)}=${encodeComponent(v)}`).join('&')}`;
    return { url, ...payload };
  });
}

function bodyFor(op: Operation, components: Record<string, Schema>): fc.Arbitrary<{ headers: Record<string, string>; payload?: string | Buffer }> {
  if (!['POST', 'PUT', 'PATCH'].includes(op.method)) return fc.constant({ headers: {} });
  const json = { 'content-type': 'application/json' };
  const options: Array<fc.WeightedArbitrary<{ headers: Record<string, string>; payload?: string | Buffer }>> = [
    { arbitrary: valueFor(op.jsonBody ?? { type: 'object' }, components).map((v) => ({ headers: json, payload: JSON.stringify(v) ?? 'null' })), weight: 6 },
    { arbitrary: fc.constantFrom(...RAW_JSON_BODIES).map((payload) => ({ headers: json, payload })), weight: 1 },
  ];
  if (op.multipart) {
    options.push({ arbitrary: hostileMultipart.map(({ payload, contentType }) => ({ headers: { 'content-type': contentType }, payload })), weight: 3 });
  }
  return fc.oneof(...options);
}
