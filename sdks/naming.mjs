// Where each operation of openapi.json lives in an SDK: `client.<resource>.<method>()`, for the
// generators written in JavaScript (TypeScript, Go; Python's generate.py reads the same table).
// The table is sdks/naming.json, shared by every SDK so that they name alike: resources follow
// the OpenAPI tag (camelCased) unless an operation is moved; methods are the operationId without
// its resource noun (`createAgent` → agents.create, `getAgent` → agents.retrieve), as Stripe and
// OpenAI name them, with the irregular ones listed. A new operation gets a name by the rule, so
// the SDK never silently lacks one after `npm run generate`; the suite's check fails until then.
import fs from 'node:fs';
import path from 'node:path';

const table = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, 'naming.json'), 'utf8'));

const camel = (text) => text.replace(/[-\s]+(\w)/g, (_, c) => c.toUpperCase());

/** `[resource, method]` of an operation. */
export function placeOf(operationId, tag) {
  if (table.overrides[operationId]) return table.overrides[operationId];
  const resource = table.resourceOfTag[tag] ?? camel(tag);
  let method = operationId;
  for (const noun of table.nouns[resource] ?? []) {
    const at = method.indexOf(noun);
    if (at > 0) {
      method = method.slice(0, at) + method.slice(at + noun.length);
      break;
    }
  }
  method = method.replace(/With$/, '').replace(/^get(?=[A-Z]|$)/, 'retrieve');
  return [resource, method.charAt(0).toLowerCase() + method.slice(1)];
}
