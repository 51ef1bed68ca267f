import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { freePort } from './ports.ts';
import { urlInSchema } from './schemas.ts';

// Real server processes for tests that need several (`npm start` as a deployment runs it), and a
// TCP proxy that can cut a dependency (Redis, PostgreSQL) away from them and bring it back.

const root = path.resolve(import.meta.dirname, '../..');

export interface ServerProcess {
  child: ChildProcess;
  name: string;
  /** Everything the process wrote (pino JSON lines on stdout, anything on stderr). */
  output(): string;
  /** Sends a signal and resolves with how the process ended and how long it took. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }>;
}

/** Starts `src/server.ts` with `env`; resolves once `ready(output)` holds (or fails when it exits). */
export async function startServer(name: string, env: Record<string, string>, ready: (output: string) => boolean | Promise<boolean>, timeoutMs = 60_000): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const server: ServerProcess = {
    child,
    name,
    output: () => output,
    async stop(signal = 'SIGTERM') {
      const started = Date.now();
      if (child.exitCode !== null || child.signalCode !== null) return { code: child.exitCode, signal: child.signalCode, ms: 0 };
      const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, sig) => resolve({ code, signal: sig })));
      child.kill(signal);
      const { code, signal: sig } = await ended;
      return { code, signal: sig, ms: Date.now() - started };
    },
  };
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}):\n${output.slice(-4000)}`);
    if (await ready(output)) return server;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`${name} did not become ready:\n${output.slice(-4000)}`);
}

/** True once GET /v1/health on the port answers 200. */
export const healthy = (port: number) => () => fetch(`http://127.0.0.1:${port}/v1/health`).then((r) => r.ok, () => false);

export interface TcpProxy {
  port: number;
  /** Drops every connection and refuses new ones (the dependency is down). */
  cut(): Promise<void>;
  /** Accepts connections again on the same port. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

/** A TCP proxy on 127.0.0.1 to `target`: the processes under test reach the dependency through it. */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(target);
    track(client);
    track(upstream);
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  const listen = (port: number) => new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', () => resolve()));
  await listen(0);
  const { port } = server.address() as net.AddressInfo;
  let listening = true;
  const stopListening = () =>
    new Promise<void>((resolve) => {
      if (!listening) return resolve();
      listening = false;
      server.close(() => resolve());
      for (const socket of sockets) socket.destroy();
    });
  return {
    port,
    cut: stopListening,
    async restore() {
      if (listening) return;
      await listen(port);
      listening = true;
    },
    close: stopListening,
  };
}

/** Polls `probe` every 100 ms until it gives a value; throws "timed out waiting for <what>" after `timeoutMs`. */
export async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A worker process (ROLE=worker) is ready once it says it serves no HTTP API. */
export const workerReady = (output: string) => output.includes('worker role: HTTP API not served');

/**
 * An API process and a first worker of one deployment on PostgreSQL (`schema` of `databaseUrl`,
 * recordings in the database), each with a DATA_DIR of its own under `work`; `extra` adds settings.
 * `env(name, role, port)` gives the settings of another process of the same deployment.
 */
export async function startApiAndWorker(options: { databaseUrl: string; schema: string; work: string; extra: Record<string, string> }) {
  const common = {
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    DATABASE_URL: urlInSchema(options.databaseUrl, options.schema),
    JWT_SECRET: randomBytes(24).toString('hex'),
    BLOB_STORE: 'postgres',
    ALLOW_PRIVATE_URLS: 'true',
    RATE_LIMIT_USER_PER_MIN: '10000',
    RATE_LIMIT_IP_PER_MIN: '10000',
    ...options.extra,
  };
  const apiPort = await freePort();
  const env = (name: string, role: string, port: number) => ({ ...common, ROLE: role, PORT: String(port), DATA_DIR: path.join(options.work, name) });
  const api = await startServer('api', env('api', 'api', apiPort), healthy(apiPort));
  const worker1 = await startServer('worker1', env('worker1', 'worker', await freePort()), workerReady);
  return { apiPort, api, worker1, env };
}
