import http from 'node:http';
import type { AddressInfo } from 'node:net';

// A real HTTP receiver on 127.0.0.1 for the webhook tests and the benchmark: records every
// request (headers and raw body) and answers with what `respond` decides.

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

/** Answer: a status (and optional body), or 'hang' to never answer. */
export type Respond = (request: Received, index: number) => number | { status: number; body?: string } | 'hang';

export async function startReceiver(respond: Respond = () => 200) {
  const received: Received[] = [];
  let handler = respond;
  const hanging = new Set<http.ServerResponse>();
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      const index = received.push(request) - 1;
      for (const w of [...waiters]) {
        if (received.length >= w.count) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve();
        }
      }
      const answer = handler(request, index);
      if (answer === 'hang') {
        hanging.add(res);
        return;
      }
      const { status, body } = typeof answer === 'number' ? { status: answer, body: '' } : answer;
      res.writeHead(status, { 'content-type': 'text/plain' }).end(body ?? '');
    });
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    setRespond(next: Respond) {
      handler = next;
    },
    /** Resolves when `count` requests have arrived (or rejects after `timeoutMs`). */
    waitFor(count: number, timeoutMs = 10_000): Promise<void> {
      if (received.length >= count) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`receiver got ${received.length} of ${count} requests`)), timeoutMs);
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;
