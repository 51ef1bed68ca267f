// JSON Schema (as openapi.json writes it) → a TypeScript type expression. Used by generate.mjs.
// Named types: a schema with a `title` that has one shape everywhere becomes an exported type,
// referred to by name; a title seen with two shapes is inlined wherever it occurs.

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

export function createNamer(schemas) {
  /** title → canonical JSON, or null when the title names different shapes. */
  const shapes = new Map();
  const visit = (schema) => {
    if (!schema || typeof schema !== 'object') return;
    if (Array.isArray(schema)) return schema.forEach(visit);
    if (typeof schema.title === 'string' && IDENT.test(schema.title)) {
      const json = JSON.stringify(schema);
      const seen = shapes.get(schema.title);
      if (seen === undefined) shapes.set(schema.title, json);
      else if (seen !== json) shapes.set(schema.title, null);
    }
    for (const value of Object.values(schema)) visit(value);
  };
  schemas.forEach(visit);
  const named = new Map([...shapes].filter(([, json]) => json !== null));
  return {
    /** The exported name of this schema, if it has one. */
    nameOf(schema) {
      const title = schema?.title;
      return title && named.get(title) === JSON.stringify(schema) ? title : undefined;
    },
    titles: () => [...named.keys()].sort(),
    schemaOf: (title) => JSON.parse(named.get(title)),
  };
}

const literal = (value) => JSON.stringify(value);
const key = (name) => (IDENT.test(name) ? name : JSON.stringify(name));
const unique = (types) => [...new Set(types)];

function union(types) {
  const list = unique(types);
  if (list.includes('unknown')) return 'unknown';
  return list.length === 1 ? list[0] : list.map((t) => (/=>/.test(t) ? `(${t})` : t)).join(' | ');
}

function comment(text, pad) {
  if (!text) return '';
  const clean = String(text).replaceAll('*/', '*\\/').replace(/\s+/g, ' ').trim();
  return `${pad}/** ${clean} */\n`;
}

/**
 * The type of `schema`. `ctx.namer` gives names; `ctx.self` is the title being defined (written
 * out rather than referred to); `ctx.refs` maps `$ref` strings to type names.
 */
export function tsType(schema, ctx, indent = '') {
  if (schema === true || !schema || Object.keys(schema).filter((k) => !['description', 'examples', 'default'].includes(k)).length === 0) return 'unknown';
  if (schema.$ref) return ctx.refs(schema.$ref);
  const name = ctx.namer.nameOf(schema);
  if (name && name !== ctx.self) return name;
  const inner = { ...ctx, self: undefined };
  if ('const' in schema) return literal(schema.const);
  if (schema.enum) return union(schema.enum.map(literal));
  if (schema.anyOf || schema.oneOf) return union((schema.anyOf ?? schema.oneOf).map((s) => tsType(s, inner, indent)));
  if (schema.allOf) return unique(schema.allOf.map((s) => tsType(s, inner, indent))).join(' & ');
  if (Array.isArray(schema.type)) return union(schema.type.map((type) => tsType({ ...schema, type }, inner, indent)));
  switch (schema.type) {
    case 'string':
      return schema.format === 'binary' ? 'Uploadable' : 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array': {
      const item = tsType(schema.items, inner, indent);
      return /[ |&]/.test(item) && !item.startsWith('{') ? `Array<${item}>` : `${item}[]`;
    }
    case 'object':
      return objectType(schema, inner, indent);
    default:
      return schema.properties ? objectType(schema, inner, indent) : 'unknown';
  }
}

function objectType(schema, ctx, indent) {
  const props = Object.entries(schema.properties ?? {});
  const extra = schema.additionalProperties ?? (schema.patternProperties ? Object.values(schema.patternProperties)[0] : undefined);
  const extraType = extra === undefined || extra === false ? undefined : extra === true ? 'unknown' : tsType(extra, ctx, indent);
  if (props.length === 0) return extraType ? `Record<string, ${extraType}>` : 'Record<string, never>';
  const required = new Set(schema.required ?? []);
  const pad = `${indent}  `;
  const lines = props.map(([name, prop]) => {
    const optional = required.has(name) ? '' : '?';
    return `${comment(prop?.description, pad)}${pad}${key(name)}${optional}: ${tsType(prop, ctx, pad)};`;
  });
  // Declared properties have their own types, so the index signature can only say `unknown`.
  if (extraType) lines.push(`${pad}[key: string]: unknown;`);
  return `{\n${lines.join('\n')}\n${indent}}`;
}
