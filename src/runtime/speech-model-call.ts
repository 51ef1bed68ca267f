import type { DialogueEngine } from '../engine/types.ts';
import type { RuntimeClock } from '../ports/clock.ts';
import type { SpeechModel } from '../ports/speech-model.ts';
import type { CallMedia } from '../ports/telephony.ts';
import type { CallAgent } from './call-agent.ts';
import type { RecorderSink, SessionObserver } from './outcome.ts';
import { createCallPipeline } from './pipeline/call-pipeline.ts';
import { modelStages } from './pipeline/model-stages.ts';

// One live call whose agent thinks in speech (`llm.provider: "openai-realtime"`): the call shell
// with the model's stages (pipeline/model-stages.ts). Same interface and outcome as
// createCallSession; no HTTP, no SQL, no vendor. A transport that carries G.711 μ-law (a carrier's
// media stream: `stream.mulaw`) has its μ-law go to the model and back as it is, with no decoding
// or resampling on the frame path; every other transport speaks PCM16 16 kHz to it.

export interface SpeechModelCallDeps {
  clock: RuntimeClock;
  media: CallMedia;
  model: SpeechModel;
  engine: DialogueEngine;
  agent: CallAgent;
  workspaceId: string;
  variables: Record<string, string>;
  observer: SessionObserver;
  recorder?: RecorderSink;
  /** The wall clock's date, for the instructions ("Today is …"). */
  today: Date;
}

export function createSpeechModelCall(deps: SpeechModelCallDeps) {
  const codec = deps.media.stream.mulaw ? 'mulaw' : 'pcm16';
  return createCallPipeline({ ...deps, codec }, (shell) => modelStages(shell, deps));
}
