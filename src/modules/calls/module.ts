import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { Job } from '../../platform/jobs/job.ts';
import type { Platform } from '../../platform/platform.ts';
import type { KnowledgeSearch } from '../knowledge-base/search.ts';
import { usdToMicros } from '../../platform/money.ts';
import { createFunctionCaller } from '../agents/functions.ts';
import { createWakeSignal } from '../../platform/outbox/emitter.ts';
import { createCallJournal } from './journal.ts';
import { createPostCallJob } from './post-call.ts';
import { createCallOwnership } from './ownership.ts';
import { createCallRunner } from './runner.ts';
import { createCallFigures } from './figures.ts';
import { createCallReads } from './reads.ts';
import { callsRoutes } from './routes.ts';
import { createCallsService } from './service.ts';
import { createCallWorker } from './worker.ts';
import { registerCallGauges } from './gauges.ts';
import { type CallRow, createCallsRepo } from './repo.ts';
import { createLinkSigner } from './signed-links.ts';


// The calls module assembled once per app: the journal (only writer of call rows), the runner of
// this process's live calls, the service behind the routes, and two jobs (ROLE=all|worker): the
// dialer and the post-call job (recording, analysis, call.ended).

export function createCallsModule(platform: Platform, options: { linkSecret: string; knowledge: KnowledgeSearch }) {
  const { db, clock, config, providers } = platform;
  const signer = createLinkSigner({ secret: options.linkSecret, publicBaseUrl: config.publicBaseUrl, clock });
  const links = {
    recordingUrl: (id: string) => signer.sign(`/v1/calls/${id}/recording.mp3`),
    transcriptUrl: (id: string) => signer.sign(`/v1/calls/${id}/transcript`),
  };
  const repo = createCallsRepo(db);
  const rates = { callPerMinMicros: usdToMicros(config.pricing.callPerMinUsd), webVoicePerMinMicros: usdToMicros(config.pricing.webVoicePerMinUsd) };
  // The post-call job is woken in process after a finish commits (and by NOTIFY on PostgreSQL).
  const postCallWake = createWakeSignal();
  const journal = createCallJournal({ db, database: platform.database, nudgePostCall: () => postCallWake.nudge(), clock, events: platform.events, links, rates });
  const { knowledge } = options;
  const functions = createFunctionCaller({ outbound: platform.outbound, clock });
  const runner = createCallRunner({
    db,
    journal,
    providers,
    cpu: platform.cpu,
    logger: platform.logger,
    knowledge,
    functions,
    holder: `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`,
    rates,
    earlyTranscriptMs: config.stt.earlyTranscriptMs,
    wallClock: clock,
    sttTimeoutMs: config.stt.timeoutMs,
    tracer: platform.telemetry.tracer,
    metrics: platform.metrics,
  });
  const ownership = createCallOwnership({ db, clock, journal, runner, blobs: platform.providers.blobs, logger: platform.logger, leaseMs: config.calls.leaseMs, sandboxSpeed: config.sandboxSpeed });
  const worker = createCallWorker({ platform, runner, ownership });
  registerCallGauges(platform.metrics.registry, { db, runner, logger: platform.logger });
  const postCall = createPostCallJob({
    database: platform.database,
    clock,
    logger: platform.logger,
    journal,
    providers,
    cpu: platform.cpu,
    knowledge,
    functions,
    schedule: config.calls.postCallSchedule,
    leaseMs: config.calls.postCallLeaseMs,
    concurrency: config.calls.postCallConcurrency,
    wake: postCallWake,
    tracer: platform.telemetry.tracer,
    failures: platform.metrics.voice.postCallFailures,
  });
  const service = createCallsService({
    db,
    clock,
    journal,
    runner,
    providers,
    knowledge,
    leaseMs: config.calls.leaseMs,
    nudge: () => worker.nudge(),
  });
  async function removeContent(workspaceId: string, call: CallRow) {
    if (call.recording_key) await providers.blobs.delete(call.recording_key);
    await repo.clearContent(workspaceId, call.id, clock.now());
  }
  const reads = createCallReads({ repo, links: signer, removeContent });
  const jobs: Job[] = [
    // The dialer: queued calls (and calls whose process died) are picked up.
    { name: 'calls', start: worker.start, stop: worker.stop },
    // After the call: recordings, extraction, call.ended (calls ended anywhere, or left by a dead worker).
    { name: 'post-call', start: postCall.start, stop: postCall.stop },
  ];
  // The figures other modules show (analytics, usage, voice sessions): their reads of calls.
  const figures = createCallFigures();
  return { routes: callsRoutes({ service, reads, blobs: providers.blobs }), journal, runner, ownership, worker, postCall, service, reads, figures, jobs };
}

export type CallsModule = ReturnType<typeof createCallsModule>;
