// The media port: one live audio connection between the runtime and the far end, PCM16 mono 16 kHz
// in frames of 20 ms (adapters convert at the edge). Implemented by the telephony adapters (Twilio
// Media Streams, the sandbox's in-memory pair), the built-in media WebSocket and the LiveKit bridge.
// A carrier whose media is G.711 μ-law also offers it as it comes (`mulaw`), for a stage that takes
// that codec itself (a speech model): no decoding or resampling on the frame path.

/** The audio a call's stages take and give: PCM16 16 kHz frames, or the transport's own μ-law 8 kHz. */
export type AudioCodec = 'pcm16' | 'mulaw';

/** The transport's own G.711 μ-law, 8 kHz mono: 160 bytes a 20 ms frame. */
export interface MulawMedia {
  /**
   * Registers the receiver of the caller's μ-law as the far end sent it. Taken instead of `onFrame`:
   * once it is registered the stream decodes nothing (and `onFrame`'s listener is not called).
   */
  onAudio(listener: (mulaw: Uint8Array) => void): void;
  /** Writes one agent frame of μ-law (160 bytes), as `MediaStream.send` writes PCM. */
  send(frame: Uint8Array, delayMs?: number): boolean;
}

/** Why the far end closed the media: the caller hung up, or the transport failed. */
export type MediaCloseReason = { kind: 'hangup' } | { kind: 'error'; message: string };

/** One live audio connection: frames in, frames out, playback control. */
export interface MediaStream {
  /** Registers the receiver of the caller's frames (320 samples each). */
  onFrame(listener: (frame: Int16Array) => void): void;
  /** Registers the receiver of marks the far end has played (see `mark`). */
  onMark(listener: (name: string) => void): void;
  /** Registers the receiver of keypad digits the caller pressed (Twilio `dtmf`), when the transport has them. */
  onDtmf?(listener: (digit: string) => void): void;
  /** Registers the receiver of typed text standing in for speech (the media WebSocket's `{type:"text"}`). */
  onText?(listener: (text: string) => void): void;
  /** Tells the far end each transcript line as it is written (the media WebSocket's `transcript`). */
  transcript?(line: { role: 'agent' | 'user'; text: string }): void;
  /** Registers the receiver of the far end closing (hang-up or media failure); called at most once. */
  onClose(listener: (reason: MediaCloseReason) => void): void;
  /**
   * Writes one agent frame. Returns false when the transport is over its bound (a slow peer).
   * `delayMs` (real milliseconds from now), only for a transport with `leadMs`: when the frame is due.
   */
  send(frame: Int16Array, delayMs?: number): boolean;
  /**
   * Set when the transport plays frames at their time by itself (off the event loop): the speaker
   * hands it frames up to this many real milliseconds before they are due, with their delay, and
   * `clear` drops those not yet written. The event loop's pauses then cost the audio nothing.
   */
  readonly leadMs?: number;
  /** Set when the transport's media is G.711 μ-law (a carrier's): the audio as it comes, both ways. */
  readonly mulaw?: MulawMedia;
  /** Tells the far end that the agent's audio up to here belongs to `name` (Twilio `mark`). */
  mark(name: string): void;
  /** Stops playback of what was sent and not yet played (barge-in; Twilio `clear`). */
  clear(): void;
  /** Closes the media from our side. */
  close(): void;
}
