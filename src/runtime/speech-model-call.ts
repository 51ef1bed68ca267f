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
// createCallSession; no HTTP, no SQL, no vendor.

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
  return createCallPipeline(deps, (shell) => modelStages(shell, deps));
}
