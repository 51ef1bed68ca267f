import { VoiceAgent } from '../../sdks/typescript/src/index.ts';

// Run by typescript-platform.test.ts in a Node with a global WebSocket (`--experimental-websocket`
// on Node 20, the default from 22): connect() without options uses it. Prints the byte length of
// the first binary message (the agent's greeting), or exits non-zero.
const [baseURL, email, password] = process.argv.slice(2);
const client = new VoiceAgent({ baseURL, email, password });
const agent = await client.agents.create({ name: 'Global socket', first_message: 'Hello there.' });
const session = await client.voiceSessions.create({ agent_id: agent.id, external_user_id: 'global-1' });
type Listening = { binaryType: string; send(data: string): void; close(): void; addEventListener(type: string, listener: (event: { data: unknown }) => void): void };
const socket = client.voiceSessions.connect<Listening>(session);
const bytes = await new Promise<number>((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error('no audio within 60 s')), 60_000);
  socket.addEventListener('message', (event) => {
    if (event.data instanceof ArrayBuffer) {
      clearTimeout(timer);
      resolve(event.data.byteLength);
    }
  });
  socket.addEventListener('error', () => reject(new Error('the media socket failed')));
});
socket.close();
await client.voiceSessions.end(session.id).catch(() => undefined);
console.log(bytes);
