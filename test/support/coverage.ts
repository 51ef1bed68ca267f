import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';

// Records which operations (METHOD + route pattern) the suite calls, from app.inject and from
// real HTTP requests alike; test/openapi-coverage.check.ts compares them with openapi.json.

const seen = new Set<string>();

export function recordOperations(app: FastifyInstance) {
  const dir = process.env.TEST_COVERAGE_DIR;
  app.addHook('onResponse', async (request) => {
    const route = request.routeOptions.url;
    if (!route || !route.startsWith('/v1/')) return;
    const operation = `${request.method} ${route.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`;
    if (seen.has(operation)) return;
    seen.add(operation);
    if (dir) fs.appendFileSync(path.join(dir, `${process.pid}.txt`), `${operation}\n`);
  });
}
