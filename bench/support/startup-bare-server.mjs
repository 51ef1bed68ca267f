// The floor bench/startup.bench.ts compares the product's start with: a bare `node` process (no
// tsx, no database) that starts a Fastify 5 server answering one route, GET /openapi.json, with a
// small JSON document. What it takes to start is Node's own start plus loading Fastify on this
// machine at this moment: a busy machine shows in it as much as in the product's start.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/openapi.json', async () => ({ openapi: '3.1.0', info: { title: 'bare', version: '0' }, paths: {} }));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
