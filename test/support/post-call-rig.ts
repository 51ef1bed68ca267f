import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import pino from 'pino';
import { Counter, Registry } from 'prom-client';
import { createFunctionCaller } from '../../src/modules/agents/functions.ts';
import { createPostCallJob } from '../../src/modules/calls/post-call.ts';
import { rawTrackKey } from '../../src/modules/calls/raw-tracks.ts';
import { createFsBlobStore } from '../../src/platform/blobs/fs.ts';
import { callingThread, type CpuPool, type CpuRunOptions } from '../../src/platform/cpu-pool.ts';
import type { Executor } from '../../src/platform/db/schema.ts';
import type { Providers } from '../../src/ports/providers.ts';
import { createOpenAiLlm } from '../../src/providers/llm/openai.ts';
import { BLOCK_SAMPLES } from '../../src/runtime/audio/recorder.ts';
import { startFakeOpenAi } from '../fakes/openai/llm.ts';
import { journalRig } from './call-rows.ts';
import { closeAtEnd } from './cleanup.ts';

// The post-call job (src/modules/calls/post-call.ts) built straight from its factory for its rule
// tests: the journal rig's CallJournal (real database, manual clock, real outbox), a real fs
// BlobStore in a temporary directory, the real OpenAI adapter talking to the local fake server
// (test/fakes/openai) for the extraction, MP3s encoded on the calling thread. `beforeEncode`
// runs just before each encoding (another worker taking the lease, say); `encodes` records the
// options each encoding was given.

export async function postCallRig() {
  const rig = await journalRig();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-post-call-'));
  const fake = await startFakeOpenAi({ apiKey: 'sk-test' });
  closeAtEnd(async () => {
    await fake.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const blobs = createFsBlobStore(dir);
  const providers = {
    blobs,
    llmFor: (llm: { provider: string; model: string }) => createOpenAiLlm({ baseUrl: fake.url, apiKey: 'sk-test', model: llm.model, maxRetries: 0 }),
  } as unknown as Providers;
  const hooks: { beforeEncode: (() => Promise<void>) | null } = { beforeEncode: null };
  const encodes: CpuRunOptions[] = [];
  const cpu = {
    async run(task, input, options) {
      encodes.push(options ?? {});
      await hooks.beforeEncode?.();
      return callingThread.run(task, input);
    },
  } as Pick<CpuPool, 'run'> as CpuPool;
  const registry = new Registry();
  const failures = new Counter({ name: 'post_call_failures_test', help: 'test', labelNames: ['step'] as const, registers: [registry] });
  const functions = createFunctionCaller({
    outbound: { request: async () => Promise.reject(new Error('no function is called by an extraction')) },
    clock: rig.clock,
  });
  const logger = pino({ level: 'silent' });

  /** The job with the rig's parts; `holder` or `failures` given as undefined leaves it out, as a deployment may. */
  function job(overrides: { schedule?: number[]; leaseMs?: number; cpu?: CpuPool; holder?: string; failures?: typeof failures } = {}) {
    return createPostCallJob({
      database: rig.database,
      clock: rig.clock,
      logger,
      journal: rig.journal,
      providers,
      cpu: overrides.cpu ?? cpu,
      knowledge: { search: async () => [] },
      functions,
      schedule: overrides.schedule ?? [0, 1000, 5000],
      leaseMs: overrides.leaseMs ?? 30_000,
      concurrency: 4,
      holder: 'holder' in overrides ? overrides.holder : 'W1',
      failures: 'failures' in overrides ? overrides.failures : failures,
    });
  }

  /** The failures counted, by step. */
  async function failuresCounted(): Promise<Record<string, number>> {
    const { values } = await failures.get();
    return Object.fromEntries(values.map((v) => [String(v.labels.step), v.value]));
  }

  return { ...rig, dir, fake, blobs, providers, hooks, encodes, job, failuresCounted };
}

/** Gives the agent a webhook, an extraction field and an OpenAI model (the fake server's). */
export async function agentWithExtraction(db: Executor, agentId: string, model = 'gpt-post-call') {
  const fields = [{ name: 'email', type: 'string', description: 'the caller’s email' }];
  await sql`update agents set webhook_url = 'https://hooks.example.test/agent', llm = ${JSON.stringify({ provider: 'openai', model, temperature: 0 })}::jsonb,
    extraction_fields = ${JSON.stringify(fields)}::jsonb where id = ${agentId}`.execute(db);
}

/** Two tracks of `samples` samples: the caller a ramp, the agent a loud tone (their sum clips). */
export function synthTracks(samples: number) {
  const caller = new Int16Array(samples);
  const agent = new Int16Array(samples);
  for (let i = 0; i < samples; i++) {
    caller[i] = ((i * 7) % 40_000) - 20_000;
    agent[i] = i % 32 < 16 ? 25_000 : -25_000;
  }
  const mixed = new Int16Array(samples);
  for (let i = 0; i < samples; i++) mixed[i] = Math.max(-32_768, Math.min(32_767, caller[i] + agent[i]));
  return { caller, agent, mixed };
}

/** Writes both tracks as the call's raw blocks (the last one short, as the writer leaves it). */
export async function putRawTracks(blobs: ReturnType<typeof createFsBlobStore>, workspaceId: string, callId: string, tracks: { caller: Int16Array; agent: Int16Array }) {
  for (let index = 0; index * BLOCK_SAMPLES < tracks.caller.length; index++) {
    for (const track of ['caller', 'agent'] as const) {
      const pcm = tracks[track].subarray(index * BLOCK_SAMPLES, (index + 1) * BLOCK_SAMPLES);
      await blobs.put(rawTrackKey(workspaceId, callId, track, index), Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength), 'application/octet-stream');
    }
  }
}

/** How many raw blocks of the call (both tracks counted) exist, among the first `blocks`. */
export async function rawBlocksLeft(blobs: ReturnType<typeof createFsBlobStore>, workspaceId: string, callId: string, blocks: number): Promise<number> {
  let found = 0;
  for (let index = 0; index < blocks; index++) for (const track of ['caller', 'agent'] as const) if (await blobs.stat(rawTrackKey(workspaceId, callId, track, index))) found++;
  return found;
}
