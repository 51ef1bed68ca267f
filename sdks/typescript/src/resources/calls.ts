import type { RequestOptions } from '../core/core.js';
import type { Download } from '../core/download.js';
import { sleep } from '../core/runtime.js';
import type * as M from '../generated/models.js';
import { CallsBase } from '../generated/resources/calls.js';

export type Call = M.GetCallResponse;

/** The statuses a call ends in. */
export const TERMINAL_CALL_STATUSES: readonly Call['status'][] = ['completed', 'transferred', 'voicemail', 'failed', 'busy', 'no_answer', 'canceled'];

export interface WaitOptions extends RequestOptions {
  /** Milliseconds between polls (default 1000). */
  pollInterval?: number;
  /** Milliseconds before giving up with an error (default 300 000). */
  waitTimeout?: number;
}

/** `client.calls`, with waiting for a call's end and its recording. */
export class Calls extends CallsBase {
  /** Polls the call until `done(call)`; throws when `waitTimeout` passes first. */
  async waitFor(id: string, done: (call: Call) => boolean, options: WaitOptions = {}): Promise<Call> {
    const deadline = Date.now() + (options.waitTimeout ?? 300_000);
    for (;;) {
      const call = await this.retrieve(id, options);
      if (done(call)) return call;
      if (Date.now() > deadline) throw new Error(`call ${id} is still ${call.status} (recording ${call.recording_status}) after the wait`);
      await sleep(options.pollInterval ?? 1000, options.signal);
    }
  }

  /** Waits until the call has ended (any terminal status) and returns it. */
  waitUntilEnded(id: string, options?: WaitOptions): Promise<Call> {
    return this.waitFor(id, (call) => TERMINAL_CALL_STATUSES.includes(call.status), options);
  }

  /** Waits until the call's MP3 is made, then opens it as a download (throws if it failed). */
  async downloadRecording(id: string, options?: WaitOptions): Promise<Download> {
    const call = await this.waitFor(id, (c) => c.recording_status === 'ready' || c.recording_status === 'failed' || c.recording_status === null, options);
    if (call.recording_status !== 'ready') throw new Error(`call ${id} has no recording (recording_status ${call.recording_status})`);
    return this.recordingMp3(id, {}, options);
  }
}
