import assert from 'node:assert/strict';

// The two changes of openapi.json every SDK's generator check must notice (test/sdk/*.test.ts):
// a field whose type changes, and an operation the SDK does not have yet.

// biome-ignore lint/suspicious/noExplicitAny: openapi.json read as plain JSON.
type Spec = any;

/** A copy of `spec` where the agent's `name` is an integer. */
export function withFieldTypeChanged(spec: Spec): Spec {
  const changed = structuredClone(spec);
  const agent = changed.paths['/v1/agents/{id}'].get.responses['200'].content['application/json'].schema;
  assert.equal(agent.properties.name.type, 'string');
  agent.properties.name = { type: 'integer' };
  return changed;
}

/** A copy of `spec` with an operation no SDK has: `POST /v1/agents/{id}/archive`. */
export function withOperationAdded(spec: Spec): Spec {
  const grown = structuredClone(spec);
  grown.paths['/v1/agents/{id}/archive'] = {
    post: { operationId: 'archiveAgent', tags: ['agents'], parameters: [{ in: 'path', name: 'id', required: true, schema: { type: 'string' } }], responses: { 204: { description: 'No content' } } },
  };
  return grown;
}
