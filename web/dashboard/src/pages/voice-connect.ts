import type { VoiceSessionCreated } from '../../../../sdks/typescript/src/index.ts';

// What a developer needs to connect to a voice session just made: the address to open with its
// token, and a few lines of browser code for the built-in media WebSocket (a LiveKit session is
// joined with LiveKit's client SDK instead). Plain functions, unit-tested on Node.

/** The media WebSocket's address with the token (as the SDK's `voiceSessions.mediaUrl`). */
export function mediaSocketUrl(session: Pick<VoiceSessionCreated, 'url' | 'token'>): string {
  return `${session.url}${session.url.includes('?') ? '&' : '?'}token=${encodeURIComponent(session.token)}`;
}

export function connectSnippet(session: Pick<VoiceSessionCreated, 'url' | 'token' | 'transport' | 'room_name'>): string {
  if (session.transport === 'livekit') {
    return [
      "import { Room } from 'livekit-client';",
      'const room = new Room();',
      `await room.connect(${JSON.stringify(session.url)}, ${JSON.stringify(session.token)});`,
      `// You are in room ${session.room_name}: publish the microphone, the agent answers.`,
      'await room.localParticipant.setMicrophoneEnabled(true);',
    ].join('\n');
  }
  return [
    `const socket = new WebSocket(${JSON.stringify(mediaSocketUrl(session))});`,
    "socket.binaryType = 'arraybuffer';",
    'socket.onmessage = (event) => {',
    '  // Binary: the agent speaking, PCM16 mono 16 kHz. Text: {type: "transcript" | "clear" | "end", …}',
    "  if (typeof event.data === 'string') console.log(JSON.parse(event.data));",
    '};',
    "// Speak: send PCM16 mono 16 kHz frames, or type instead of speaking:",
    "socket.onopen = () => socket.send(JSON.stringify({ type: 'text', text: 'Hello!' }));",
  ].join('\n');
}

/** "in 14 min" until the token expires, or "expired". */
export function expiresIn(expiresAt: string, now: Date): string {
  const minutes = Math.round((new Date(expiresAt).getTime() - now.getTime()) / 60_000);
  return minutes <= 0 ? 'expired' : `in ${minutes} min`;
}
