import type { Span, Tracer } from '@opentelemetry/api';
import type { FastifyBaseLogger } from 'fastify';
import type { Counter } from 'prom-client';
import { createDialogueEngine } from '../../engine/index.ts';
import type { KnowledgeSearch } from '../../engine/types.ts';
import type { CpuPool } from '../../platform/cpu-pool.ts';
import type { DatabaseHandle } from '../../platform/db/database.ts';
import { AppError } from '../../platform/errors.ts';
import { leaseHolderName } from '../../platform/jobs/lease.ts';
import { createJobRunner, type WakeSource } from '../../platform/jobs/runner.ts';
import { traceparentOf } from '../../platform/telemetry/context.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Providers } from '../../ports/providers.ts';
import { encodeMp3InPool } from '../../platform/audio/mp3.ts';
import { SAMPLE_RATE } from '../../platform/audio/frames.ts';
import type { FunctionCaller } from '../agents/functions.ts';
import { loadCallAgent, type RunnableAgent } from '../agents/call-agent.ts';
import { type CallJournal, POST_CALL_CHANNEL } from './journal.ts';
import type { PostCallFence } from './post-call-sql.ts';
import { deleteRawTracks, RawTracksMissingError, readMixedTracks } from './raw-tracks.ts';
import type { CallRow } from './repo.ts';
import type { TranscriptEntry } from './tables.ts';

// After the call (DESIGN part 9), a job on the platform's job runner whose row is the ended call:
//  1. recording: the raw tracks written during the call are mixed and encoded (encodeMp3InPool,
//     the CPU pool), the MP3 stored, recording ready, then the raw tracks deleted;
//  2. analysis: the agent's extraction over the transcript → `extracted`, analysis ready;
//  3. once both have settled (ready, failed, or not needed): call.ended and the outcome event,
//     emitted once by the journal (fenced by the lease and ended_event_at).
// A failed step is tried again on the retry schedule (POST_CALL_RETRY_SCHEDULE) and `failed`
// after the last attempt; a CPU pool too busy to take the MP3 does not use up an attempt (the
// job waits for it). A running attempt renews its lease; a worker that dies mid-attempt leaves it
// to expire: any worker then claims the call again. Woken after a finish commits (in process, and NOTIFY on PostgreSQL).

/** A CPU pool too busy to take the task: the attempt waits this long and is not counted. */
const BUSY_RETRY_MS = 1000;

export interface PostCallDeps {
  database: DatabaseHandle;
  clock: Clock;
  logger: FastifyBaseLogger;
  journal: CallJournal;
  providers: Providers;
  cpu: CpuPool;
  knowledge: KnowledgeSearch;
  functions: FunctionCaller;
  /** Attempt offsets from the first (POST_CALL_RETRY_SCHEDULE); its length is the attempts allowed. */
  schedule: number[];
  leaseMs: number;
  concurrency: number;
  wake?: WakeSource;
  holder?: string;
  pollIntervalMs?: number;
  /** Tracing on: each attempt is a span in the trace of the request that placed the call. */
  tracer?: Tracer;
  /** Counts the steps that failed for good (vap_post_call_failures_total). */
  failures?: Pick<Counter<'step'>, 'inc'>;
}

/** A step's failure: retried, unless `permanent` (nothing another attempt could change). */
interface StepFailure {
  message: string;
  busy: boolean;
  permanent: boolean;
}

function failureOf(err: unknown): StepFailure {
  const busy = err instanceof AppError && err.code === 'service_unavailable';
  const permanent = err instanceof RawTracksMissingError;
  return { message: (err as Error)?.message ?? String(err), busy, permanent };
}

export function createPostCallJob(deps: PostCallDeps) {
  const { journal, providers, logger } = deps;
  const holder = deps.holder ?? leaseHolderName();
  const maxAttempts = Math.max(1, deps.schedule.length);

  async function recordingStep(row: CallRow, fence: PostCallFence, signal?: AbortSignal): Promise<StepFailure | null> {
    const samples = row.recording_samples ?? 0;
    try {
      if (row.content_deleted_at) {
        await deleteRawTracks(providers.blobs, row.workspace_id, row.id, samples);
        return { message: "the call's content was deleted", busy: false, permanent: true };
      }
      const pcm = await readMixedTracks(providers.blobs, row.workspace_id, row.id, samples);
      const mp3 = await encodeMp3InPool(deps.cpu, pcm, SAMPLE_RATE, { lane: 'background', signal });
      const key = `recordings/${row.workspace_id}/${row.id}.mp3`;
      await providers.blobs.put(key, mp3, 'audio/mpeg');
      // The raw tracks go only once the row names the MP3 (a lost lease leaves them to the next attempt).
      if (await journal.recordingStored(fence, { key, bytes: mp3.length })) await deleteRawTracks(providers.blobs, row.workspace_id, row.id, samples);
      return null;
    } catch (err) {
      logger.warn({ err, callId: row.id, attempt: row.post_call_attempts }, 'post-call: the recording failed');
      return failureOf(err);
    }
  }

  async function analysisStep(row: CallRow, fence: PostCallFence, agent: RunnableAgent | undefined): Promise<StepFailure | null> {
    if (!agent) return { message: 'the agent was deleted', busy: false, permanent: true };
    try {
      const engine = createDialogueEngine({
        llm: providers.llmFor(agent.llm),
        knowledge: deps.knowledge,
        functions: deps.functions.invokerFor({ agentId: agent.id, secret: agent.webhook_secret, callId: row.id }),
      });
      const turns = ((row.transcript ?? []) as TranscriptEntry[]).map((e) => ({ role: e.role, text: e.text }));
      await journal.analysisDone(fence, await engine.extract(agent, turns));
      return null;
    } catch (err) {
      logger.warn({ err, callId: row.id, attempt: row.post_call_attempts }, 'post-call: extraction failed');
      return failureOf(err);
    }
  }

  /**
   * One attempt at a claimed call, its lease renewed every third of it while it runs. `signal`
   * (the runner stopping) gives up the encoding: the step then counts as busy, due again at once.
   */
  async function run(row: CallRow, signal?: AbortSignal, span?: Span): Promise<void> {
    const fence: PostCallFence = { id: row.id, holder, attempt: row.post_call_attempts };
    const renewal = setInterval(() => {
      journal.renewPostCall(fence, deps.leaseMs).then(
        (kept) => kept || logger.warn({ callId: row.id, attempt: fence.attempt }, 'post-call: the lease was lost while running'),
        (err) => logger.warn({ err, callId: row.id }, 'post-call: the lease could not be renewed'),
      );
    }, deps.leaseMs / 3);
    try {
      await attempt(row, fence, signal, traceparentOf(span));
    } finally {
      clearInterval(renewal);
    }
  }

  /** The steps still pending, then (once settled) the last events, in the trace of `traceParent` (the attempt's span). */
  async function attempt(row: CallRow, fence: PostCallFence, signal: AbortSignal | undefined, traceParent: string | null): Promise<void> {
    const agent = await loadCallAgent(deps.database.db, row.workspace_id, row.agent_id);
    const exhausted = row.post_call_attempts > maxAttempts;
    const lost = exhausted ? { message: 'the worker was lost during the last attempt', busy: false, permanent: true } : null;
    const recording = row.recording_status === 'pending' ? (lost ?? (await recordingStep(row, fence, signal))) : null;
    const analysis = row.analysis_status === 'pending' ? (lost ?? (await analysisStep(row, fence, agent))) : null;
    const failures = [recording, analysis].filter((f): f is StepFailure => f !== null);
    const retryable = failures.filter((f) => !f.permanent);
    if (retryable.length > 0 && (row.post_call_attempts < maxAttempts || retryable.every((f) => f.busy))) {
      const busy = retryable.every((f) => f.busy);
      const now = deps.clock.now().getTime();
      const delay = busy ? BUSY_RETRY_MS : Math.max(0, deps.schedule[row.post_call_attempts] - deps.schedule[row.post_call_attempts - 1]);
      await journal.retryPostCall(fence, {
        dueAt: new Date(now + delay),
        attempts: busy ? row.post_call_attempts - 1 : row.post_call_attempts,
        recordingError: recording?.message,
        analysisError: analysis?.message,
      });
      return;
    }
    const ended = await journal.endPostCall(fence, agent?.destination ?? null, { recording: recording?.message, analysis: analysis?.message }, traceParent);
    if (ended && recording) deps.failures?.inc({ step: 'recording' });
    if (ended && analysis) deps.failures?.inc({ step: 'analysis' });
    if (!ended) logger.warn({ callId: row.id, attempt: row.post_call_attempts }, 'post-call: result dropped, the lease was lost');
  }

  const jobs = createJobRunner<CallRow>({
    database: deps.database,
    clock: deps.clock,
    logger,
    job: {
      name: 'post-call',
      claim: (limit) => journal.claimPostCalls({ holder, leaseMs: deps.leaseMs, limit }),
      run,
      concurrency: deps.concurrency,
      pollIntervalMs: deps.pollIntervalMs ?? 1000,
      channel: POST_CALL_CHANNEL,
      wake: deps.wake,
      // An attempt in flight past the lease is another worker's to redo anyway.
      stopTimeoutMs: Math.min(deps.leaseMs, 30_000),
      describe: (row) => ({ callId: row.id, attempt: row.post_call_attempts }),
      traceParent: (row) => row.trace_parent,
      spanAttributes: (row) => ({ 'vap.call_id': row.id, 'vap.workspace_id': row.workspace_id, 'vap.agent_id': row.agent_id, 'vap.attempt': row.post_call_attempts }),
    },
    tracer: deps.tracer,
  });

  return {
    holder,
    /** Claims the post-call work due now, runs it; answers how many calls were attempted. */
    runDueOnce: jobs.runDueOnce,
    nudge: jobs.nudge,
    start: jobs.start,
    stop: jobs.stop,
  };
}

export type PostCallJob = ReturnType<typeof createPostCallJob>;
