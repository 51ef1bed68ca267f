// The floor bench/http.bench.ts compares the product with: a bare Fastify 5 server on the same
// database handle that answers the same JSON as GET /v1/agents/{id} and GET /v1/auth/me with one
// query each (the same repo query and presenter), and nothing else: no authentication, no rate
// limit, no request id, no hooks, no logging, no response schema.
import Fastify from 'fastify';
import { createAgentsRepo } from '../../src/modules/agents/repo.ts';
import { presentAgent } from '../../src/modules/agents/present.ts';
import { createUsersRepo } from '../../src/modules/auth/repo.ts';
import { presentUser } from '../../src/modules/auth/service.ts';
import type { DatabaseHandle } from '../../src/platform/db/database.ts';

export async function startBareServer(database: DatabaseHandle, ids: { workspaceId: string; userId: string }) {
  const app = Fastify({ logger: false });
  const agents = createAgentsRepo();
  const users = createUsersRepo();
  app.get<{ Params: { id: string } }>('/v1/agents/:id', async (request, reply) => {
    const row = await agents.find(database.db, ids.workspaceId, request.params.id);
    if (!row) return reply.code(404).send({ code: 'not_found' });
    return presentAgent(row);
  });
  app.get('/v1/auth/me', async (_request, reply) => {
    const row = await users.findById(database.db, ids.userId);
    if (!row) return reply.code(404).send({ code: 'not_found' });
    return presentUser(row);
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  return { url: `http://127.0.0.1:${address.port}`, close: () => app.close() };
}
