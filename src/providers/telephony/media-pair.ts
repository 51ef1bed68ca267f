import type { MediaCloseReason, MediaStream } from '../../ports/media.ts';

// An in-memory media connection: the runtime's MediaStream on one side, a far end on the other
// (the sandbox's simulated callee, or a test). Frames cross synchronously, nothing is buffered:
// the far end plays each agent frame as it arrives, so a mark is played as soon as it is sent.

export interface FarEnd {
  /** Agent audio, marks and clears as the far end receives them. */
  onAgentFrame(listener: (frame: Int16Array) => void): void;
  onMark(listener: (name: string) => void): void;
  onClear(listener: () => void): void;
  /** The runtime closed the media (hang-up from our side, transfer). */
  onClosed(listener: () => void): void;
  /** Caller audio into the runtime. */
  sendFrame(frame: Int16Array): void;
  hangUp(): void;
  fail(message: string): void;
  readonly closed: boolean;
}

export function createMediaPair(): { stream: MediaStream; far: FarEnd } {
  let toRuntime: ((frame: Int16Array) => void) | null = null;
  let markPlayed: ((name: string) => void) | null = null;
  let closedByFar: ((reason: MediaCloseReason) => void) | null = null;
  const agentFrame: Array<(frame: Int16Array) => void> = [];
  const marks: Array<(name: string) => void> = [];
  const clears: Array<() => void> = [];
  const closes: Array<() => void> = [];
  let closed = false;

  const closeFromFar = (reason: MediaCloseReason) => {
    if (closed) return;
    closed = true;
    closedByFar?.(reason);
  };

  const stream: MediaStream = {
    onFrame: (listener) => {
      toRuntime = listener;
    },
    onMark: (listener) => {
      markPlayed = listener;
    },
    onClose: (listener) => {
      closedByFar = listener;
    },
    send(frame) {
      if (closed) return false;
      for (const listener of agentFrame) listener(frame);
      return true;
    },
    mark(name) {
      if (closed) return;
      for (const listener of marks) listener(name);
      markPlayed?.(name);
    },
    clear() {
      if (closed) return;
      for (const listener of clears) listener();
    },
    close() {
      if (closed) return;
      closed = true;
      for (const listener of closes) listener();
    },
  };

  const far: FarEnd = {
    onAgentFrame: (listener) => void agentFrame.push(listener),
    onMark: (listener) => void marks.push(listener),
    onClear: (listener) => void clears.push(listener),
    onClosed: (listener) => void closes.push(listener),
    sendFrame(frame) {
      if (!closed) toRuntime?.(frame);
    },
    hangUp: () => closeFromFar({ kind: 'hangup' }),
    fail: (message) => closeFromFar({ kind: 'error', message }),
    get closed() {
      return closed;
    },
  };
  return { stream, far };
}
