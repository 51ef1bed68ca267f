import type { Span, Tracer } from '@opentelemetry/api';
import type { FastifyBaseLogger } from 'fastify';
import { createDialogueEngine } from '../../engine/index.ts';
import type { DialogueEngine, KnowledgeSearch } from '../../engine/types.ts';
import type { FunctionCaller } from '../agents/functions.ts';
import type { CpuPool } from '../../platform/cpu-pool.ts';
import type { Database } from '../../platform/db/schema.ts';
import type { Metrics } from '../../platform/metrics.ts';
import type { AgentDestination } from '../../platform/outbox/emit.ts';
import { contextOf, inSpan, traceparentOf } from '../../platform/telemetry/context.ts';
import type { Providers } from '../../ports/providers.ts';
import { FRAME_MS } from '../../platform/audio/frames.ts';
import { type CallRecorder, createCallRecorder } from '../../runtime/audio/recorder.ts';
import { createVoiceActivityDetector } from '../../runtime/audio/vad.ts';
import { type CallSession, createCallSession } from '../../runtime/call-session.ts';
import type { SessionObserver } from '../../runtime/outcome.ts';
import type { CallMedia, DialOutcome } from '../../ports/telephony.ts';
import type { RuntimeClock } from '../../ports/clock.ts';
import { createSpeechModelCall } from '../../runtime/speech-model-call.ts';
import { createStreamingRecognizer } from '../../runtime/streaming-recognizer.ts';
import type { Clock } from '../../platform/clock.ts';
import { callTraceSpan } from './call-trace.ts';
import { loadCallAgent, type RunnableAgent } from '../agents/call-agent.ts';
import type { CallRow } from './dialer-sql.ts';
import type { CallJournal, CallRef } from './journal.ts';
import { createRawTrackWriter } from './raw-tracks.ts';

// Runs one call in this process, from its claim to its terminal state: dial (or take the inbound
// media), answer, the call session (its raw tracks written to the BlobStore as it goes), and the
// journal's final transaction; the MP3 and the extraction follow in the post-call job
// (post-call.ts). Keeps the registry of this process's live calls, through which the API hangs
// up and transfers them.

export interface RunnerDeps {
  db: Database;
  journal: CallJournal;
  providers: Providers;
  cpu: CpuPool;
  logger: FastifyBaseLogger;
  knowledge: KnowledgeSearch;
  functions: FunctionCaller;
  holder: string;
  /** Phone call and web voice rates, micro-USD per minute. */
  rates: { callPerMinMicros: number; webVoicePerMinMicros: number };
  /** STT_EARLY_TRANSCRIPT_MS: a caller's pause after which their words are transcribed early. */
  earlyTranscriptMs: number;
  /** STT_TIMEOUT_MS: how long a turn waits for a streaming recogniser's final result. */
  sttTimeoutMs: number;
  /** The wall clock (a speech-to-speech model is told today's date). */
  wallClock: Clock;
  /** Tracing on: a span per call (under the dialer's job span), its turns and stages below it. */
  tracer?: Tracer;
  metrics: Metrics;
}

/** Connects the call (dials, or hands over inbound media) for its agent. */
type Connect = (signal: AbortSignal, agent: RunnableAgent) => Promise<DialOutcome>;

interface LiveCall {
  row: CallRow;
  dial: AbortController;
  session: Pick<CallSession, 'end' | 'transfer' | 'elapsedMs' | 'ended'> | null;
  /** Set once connected: the media transport (sandbox, twilio, web, livekit). */
  transport: string | null;
}

export function createCallRunner(deps: RunnerDeps) {
  const { journal, providers, logger, holder } = deps;
  const live = new Map<string, LiveCall>();

  async function balanceMicros(workspaceId: string): Promise<number> {
    const wallet = await deps.db.selectFrom('wallets').select('balance_micros').where('workspace_id', '=', workspaceId).executeTakeFirst();
    return Number(wallet?.balance_micros ?? 0);
  }

  /** The call's instruments, their label children bound once (its providers do not change). */
  function instrumentsOf(row: CallRow, agent: RunnableAgent, media: CallMedia) {
    const { voice } = deps.metrics;
    const stt = media.stt ? row.provider : 'openai';
    const tts = providers.tts.providerOf(agent.voice)?.name ?? 'unknown';
    return {
      latency: voice.turnLatency.labels(stt, agent.llm.provider, tts),
      stt: voice.turnStage.labels('stt', stt),
      llm: voice.turnStage.labels('llm_first_token', agent.llm.provider),
      tts: voice.turnStage.labels('tts_first_audio', tts),
      errors: voice.providerErrors,
    };
  }

  /**
   * The observer of a session: its writes queued in order, never blocking the frame path (their
   * events join the call's trace through `call.traceParent`); an answering turn's figures go to
   * the histograms.
   */
  function observerOf(call: CallRef, dest: AgentDestination | null, instruments: ReturnType<typeof instrumentsOf>) {
    let chain = Promise.resolve();
    const queue = (write: () => Promise<unknown>) => {
      chain = chain.then(write).then(
        () => undefined,
        (err) => logger.error({ err, callId: call.id }, 'call journal write failed'),
      );
    };
    const observer: SessionObserver = {
      transcript: (entry, turn) => {
        if (entry.latency_ms !== undefined) instruments.latency.observe(entry.latency_ms / 1000);
        if (entry.timings) {
          instruments.stt.observe(entry.timings.stt_wait_ms / 1000);
          instruments.llm.observe(entry.timings.llm_first_token_ms / 1000);
          instruments.tts.observe(entry.timings.tts_first_audio_ms / 1000);
        }
        queue(() => journal.transcript(call, dest, entry, turn));
      },
      transfer: (to, reason) => queue(() => journal.transfer(call, dest, to, reason)),
      error: (code, message) => {
        instruments.errors.inc({ kind: code });
        queue(() => journal.error(call, dest, code, message));
      },
    };
    return { observer, flushed: () => chain };
  }

  /**
   * The conversation of one call: the cascade (VAD → STT → engine → TTS), or a speech-to-speech
   * model for an agent whose llm.provider is openai-realtime. Both report to the same observer and
   * recorder and end with the same outcome.
   */
  async function sessionFor(row: CallRow, agent: RunnableAgent, media: CallMedia, parts: { clock: RuntimeClock; observer: SessionObserver; recorder: CallRecorder; span: Span | null }) {
    const engine: DialogueEngine = createDialogueEngine({ llm: providers.llmFor(agent.llm), knowledge: deps.knowledge, functions: deps.functions.invokerFor({ agentId: agent.id, secret: agent.webhook_secret, callId: row.id }) });
    const { clock, observer, recorder } = parts;
    const common = { clock, media, engine, agent, workspaceId: row.workspace_id, variables: row.variables as Record<string, string>, observer, recorder };
    if (agent.llm.provider === 'openai-realtime') {
      const model = providers.speechModelFor(agent.llm.model);
      if (!model) throw new Error('no speech-to-speech model is configured (REALTIME_BASE_URL)');
      return { session: createSpeechModelCall({ ...common, model, today: deps.wallClock.now() }), close: () => undefined };
    }
    const streaming = media.stt ? null : await openStreamingRecognizer(agent, observer);
    const stt = media.stt ?? streaming?.stt ?? providers.stt;
    if (!stt) throw new Error('no speech recogniser is configured for this call');
    const vad = await createVoiceActivityDetector({ mode: 2 });
    const session = createCallSession({
      ...common,
      media: streaming ? { ...media, stream: streaming.tee(media.stream) } : media,
      stt,
      tts: providers.speech,
      isSpeech: (frame) => vad.isSpeech(frame),
      earlyTranscriptMs: deps.earlyTranscriptMs,
      interims: streaming ?? undefined,
      latency: media.latency,
      trace: parts.span && deps.tracer ? callTraceSpan(deps.tracer, parts.span, clock) : undefined,
    });
    return {
      session,
      close: () => {
        vad.close();
        streaming?.close();
      },
    };
  }

  /**
   * STT_STREAMING=realtime: the call's recognition session, its utterances ended at half the
   * agent's turn-ending silence. A recogniser that cannot be reached leaves the call to the batch one.
   */
  async function openStreamingRecognizer(agent: RunnableAgent, observer: SessionObserver) {
    if (!providers.streamingStt) return null;
    try {
      const session = await providers.streamingStt.open({ language: agent.language, turnEndSilenceMs: Math.round(agent.turn_end_silence_ms / 2) });
      return createStreamingRecognizer(session, { timeoutMs: deps.sttTimeoutMs, onError: (message) => observer.error('stt_failed', message) });
    } catch (error) {
      observer.error('stt_failed', `streaming recognition could not start: ${error instanceof Error ? error.message : String(error)}`);
      return null;
    }
  }

  async function converse(row: CallRow, agent: RunnableAgent, media: CallMedia, dest: AgentDestination | null, entry: LiveCall, span: Span | null) {
    const recorder = createCallRecorder({ maxDurationMs: agent.max_duration_seconds * 1000 + 10_000 });
    const { observer, flushed } = observerOf(row, dest, instrumentsOf(row, agent, media));
    // A sandbox call brings its virtual clock; web sessions have a person on the other end: real time.
    const clock = media.clock ?? (row.direction === 'web' ? providers.mediaClock : providers.callClock);
    // The wallet pays for every second: the call ends when its cost would pass the balance (read
    // before the conversation starts, so that the budget counts from the answer on any clock).
    const perSecond = (row.direction === 'web' ? deps.rates.webVoicePerMinMicros : deps.rates.callPerMinMicros) / 60;
    const affordableSeconds = perSecond > 0 ? Math.floor((await balanceMicros(row.workspace_id)) / perSecond) : Number.POSITIVE_INFINITY;
    const { session, close } = await sessionFor(row, agent, media, { clock, observer, recorder, span });
    entry.transport = row.provider;
    entry.session = session;
    const raw = createRawTrackWriter({ blobs: providers.blobs, recorder, workspaceId: row.workspace_id, callId: row.id, logger });
    const ended = session.run();
    void ended.then(raw.stop, raw.stop);
    // A hang-up asked for while the call was being connected takes effect now.
    if (entry.dial.signal.aborted) session.end('api_hangup');
    // Billing is per started second: end one frame before the last affordable second is done.
    const budget = Number.isFinite(affordableSeconds)
      ? clock.setTimer(() => session.end('insufficient_balance'), Math.max(0, affordableSeconds * 1000 - FRAME_MS))
      : null;
    const outcome = await ended;
    budget?.cancel();
    // Ended by the wallet: billed to the budget, not to when the timer got round to it.
    if (outcome.endReason === 'insufficient_balance') outcome.durationMs = Math.min(outcome.durationMs, affordableSeconds * 1000);
    span?.setAttributes({ 'vap.call.status': outcome.status, 'vap.call.end_reason': outcome.endReason, 'vap.call.duration_ms': outcome.durationMs, 'vap.call.turns': outcome.latency?.turns ?? 0 });
    close();
    await flushed();
    // The raw tracks' last blocks are stored before the status is terminal: a crash after the
    // finish loses no audio; the post-call job makes the MP3 (and the extraction) from here on.
    let recordingSamples = 0;
    let recordingError: string | null = null;
    try {
      recordingSamples = await raw.finish();
    } catch (err) {
      logger.error({ err, callId: row.id }, 'the raw recording could not be stored');
      recordingError = 'the raw recording could not be stored';
    }
    recorder.release();
    await journal.finish(row, dest, {
      status: outcome.status,
      endReason: outcome.endReason,
      durationMs: outcome.durationMs,
      transcript: outcome.transcript,
      latency: outcome.latency,
      transferredTo: outcome.transferredTo ?? null,
      error: outcome.error ?? null,
      recordingSamples,
      recordingError,
      holder,
    });
  }

  /**
   * A call's run, in a span of its own when tracing is on (ids only): a child of `parent` (the
   * dialer's job span), else of the traceparent stored with the row (the request that queued it).
   */
  function run(row: CallRow, connect: Connect, parent?: Span): Promise<void> {
    if (!deps.tracer) return runCall(row, connect, null);
    const attributes = { 'vap.call_id': row.id, 'vap.agent_id': row.agent_id, 'vap.workspace_id': row.workspace_id, 'vap.call.direction': row.direction, 'vap.call.provider': row.provider };
    return inSpan(deps.tracer, 'call', { attributes, parent: parent ?? contextOf(row.trace_parent) }, (span) => runCall(row, connect, span));
  }

  async function runCall(queued: CallRow, connect: Connect, span: Span | null): Promise<void> {
    // The journal's events of the call (call.started, its transcript, the finish) join its span.
    const traceParent = traceparentOf(span);
    const row: CallRow & Pick<CallRef, 'traceParent'> = traceParent ? { ...queued, traceParent } : queued;
    const entry: LiveCall = { row, dial: new AbortController(), session: null, transport: null };
    live.set(row.id, entry);
    // The connected call's media, until its session runs (which hangs it up when it ends).
    let connected: CallMedia | null = null;
    try {
      const agent = await loadCallAgent(deps.db, row.workspace_id, row.agent_id);
      if (!agent) {
        await journal.finish(row, null, { status: 'failed', endReason: 'failed_to_connect', durationMs: 0, error: { code: 'agent_missing', message: 'the agent was deleted' }, holder });
        return;
      }
      const dest = agent.destination;
      const dialed = await connect(entry.dial.signal, agent);
      if (entry.dial.signal.aborted) {
        if (dialed.kind === 'answered') await dialed.media.hangup();
        await journal.finish(row, dest, { status: 'canceled', endReason: 'api_hangup', durationMs: 0, holder });
        return;
      }
      if (dialed.kind !== 'answered') {
        const status = dialed.kind;
        const endReason = dialed.kind === 'failed' ? 'failed_to_connect' : dialed.kind;
        const error = dialed.kind === 'failed' ? { code: 'failed_to_connect', message: dialed.message } : null;
        await journal.finish(row, dest, { status, endReason, durationMs: 0, error, holder });
        return;
      }
      connected = dialed.media;
      if (!(await journal.answered(row, dest, holder))) {
        await dialed.media.hangup();
        return;
      }
      await converse(row, agent, dialed.media, dest, entry, span);
    } catch (err) {
      logger.error({ err, callId: row.id }, 'call failed in the runtime');
      // A call that failed before its session ran is hung up here (else the line stays open).
      if (connected && !entry.session) await connected.hangup('media_error').catch((hangupErr) => logger.error({ err: hangupErr, callId: row.id }, 'call could not be hung up'));
      await journal
        .finish(row, null, { status: 'failed', endReason: 'media_error', durationMs: entry.session?.elapsedMs() ?? 0, error: { code: 'runtime_error', message: 'the call failed in the runtime' }, holder })
        .catch((finishErr) => logger.error({ err: finishErr, callId: row.id }, 'call could not be ended'));
    } finally {
      live.delete(row.id);
    }
  }

  /** The runs of this process's calls, until each has ended (its final transaction committed). */
  const runs = new Map<string, Promise<void>>();
  function tracked(callId: string, running: Promise<void>): Promise<void> {
    runs.set(callId, running);
    return running.finally(() => runs.delete(callId));
  }

  return {
    /** Runs a claimed outbound call (status ringing, leased by this holder) to its end; `parent`: the dialer job's span. */
    runOutbound(row: CallRow, parent?: Span): Promise<void> {
      return tracked(
        row.id,
        run(row, (signal, agent) =>
          providers.telephony.dial({ callId: row.id, from: row.from_number ?? '', to: row.to_number ?? '', simulation: row.simulation as never, signal, realTime: agent.llm.provider === 'openai-realtime' }),
          parent,
        ),
      );
    },
    /**
     * Runs a call whose transport is connected to its end: the one way every transport hands a call
     * over (the sandbox's inbound calls, a carrier's media streams, the media WebSocket, LiveKit).
     * `call` is its ringing row, leased by this holder (each transport has just read or claimed it:
     * the call is live here from this moment, for a hang-up that comes at once); an outbound call
     * dialed here is answered through its dial instead.
     */
    answer(call: CallRow, media: CallMedia): Promise<void> {
      return tracked(call.id, run(call, async () => ({ kind: 'answered', media })));
    },
    /** Resolves when a call this process runs has ended; undefined when it does not run here. */
    ended(callId: string): Promise<void> | undefined {
      return runs.get(callId);
    },
    /** Hangs up a call this process runs; false when it runs elsewhere (or not at all). */
    hangup(callId: string): boolean {
      const entry = live.get(callId);
      if (!entry) return false;
      if (entry.session) entry.session.end('api_hangup');
      else entry.dial.abort();
      return true;
    },
    /** Transfers a connected call this process runs; false when it runs elsewhere. */
    transfer(callId: string, to: string): boolean {
      const entry = live.get(callId);
      if (!entry?.session) return false;
      void entry.session.transfer(to);
      return true;
    },
    liveIds: () => [...live.keys()],
    /** Each live call's length on its own clock (0 before its conversation starts). */
    liveElapsed: () => [...live].map(([id, entry]) => ({ id, elapsedMs: entry.session?.elapsedMs() ?? 0 })),
    /** Connected calls by media transport. */
    mediaSessions(): Map<string, number> {
      const counts = new Map<string, number>();
      for (const entry of live.values()) if (entry.transport) counts.set(entry.transport, (counts.get(entry.transport) ?? 0) + 1);
      return counts;
    },
    get size() {
      return live.size;
    },
    holder,
  };
}

export type CallRunner = ReturnType<typeof createCallRunner>;
