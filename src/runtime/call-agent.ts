import type { EngineAgent } from '../ports/llm.ts';

/** The agent as a live call runs it. */
export interface CallAgent extends EngineAgent {
  voice: string;
  max_duration_seconds: number;
  voicemail: { action: 'hangup' | 'leave_message'; message: string | null };
  turn_end_silence_ms: number;
  barge_in_min_ms: number;
  interruptible: boolean;
  silence_timeout_seconds: number;
}
