import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';

// Instruments every app the tests build (buildTestApp passes recordOperations as its `instrument`):
// - records which operations (METHOD + route pattern) the suite calls, from app.inject and from
//   real HTTP requests alike, into `operations-<pid>.txt`;
// - scans every response body for leaked secrets and stack traces, into `leaks-<pid>.txt`.
// test/openapi-coverage.check.ts, run after the suite, compares the operations with openapi.json
// and asserts that no leak was recorded.

const seen = new Set<string>();

export const OPERATIONS_FILE = /^operations-\d+\.txt$/;
export const LEAKS_FILE = /^leaks-\d+\.txt$/;

const LEAKS: Array<{ what: string; pattern: RegExp }> = [
  { what: 'password_hash field', pattern: /"password_hash"\s*:/ },
  { what: 'key_hash field', pattern: /"key_hash"\s*:/ },
  { what: 'token_hash field', pattern: /"token_hash"\s*:/ },
  { what: 'refresh_token_hash field', pattern: /"refresh_token_hash"\s*:/ },
  { what: 'argon2 hash', pattern: /\$argon2(?:id|i|d)?\$/ },
  // A stack frame, raw or inside a JSON string (where the newline is written \n).
  { what: 'stack trace', pattern: /(?:\n|\\n) {4}at / },
];

/** What a response body leaks (names of the findings, never the secret itself). */
export function findLeaks(body: string): string[] {
  return LEAKS.filter(({ pattern }) => pattern.test(body)).map(({ what }) => what);
}

function bodyText(payload: unknown): string | undefined {
  if (typeof payload === 'string') return payload;
  if (Buffer.isBuffer(payload)) return payload.toString('utf8');
  return undefined; // a stream: scanning it would consume it
}

/** Adds the recording hooks, writing into `dir` (nothing is written without one). */
export function instrumentApp(app: FastifyInstance, dir: string | undefined) {
  app.addHook('onResponse', async (request) => {
    const route = request.routeOptions.url;
    if (!route?.startsWith('/v1/')) return;
    const operation = `${request.method} ${route.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`;
    if (seen.has(operation)) return;
    seen.add(operation);
    if (dir) fs.appendFileSync(path.join(dir, `operations-${process.pid}.txt`), `${operation}\n`);
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const text = bodyText(payload);
    if (text === undefined) return payload;
    const leaks = findLeaks(text);
    if (leaks.length > 0 && dir) {
      const where = `${request.method} ${request.routeOptions.url ?? request.url.split('?')[0]} -> ${reply.statusCode}`;
      fs.appendFileSync(path.join(dir, `leaks-${process.pid}.txt`), leaks.map((what) => `${where}: ${what}\n`).join(''));
    }
    return payload;
  });
}

export function recordOperations(app: FastifyInstance) {
  instrumentApp(app, process.env.TEST_COVERAGE_DIR);
}
