import fs from 'node:fs';
import http from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { VoiceAgent } from '@voice-agent-platform/sdk';

// Log in (the SDK refreshes the access token by itself and tells onTokens to save it)
const client = new VoiceAgent({
  baseURL: process.env.VAP_BASE_URL ?? 'http://localhost:3000',
  email: process.env.VAP_EMAIL,
  password: process.env.VAP_PASSWORD,
  onTokens: (tokens) => console.log(`tokens until ${new Date(tokens.expiresAt).toISOString()}`),
});

// A webhook receiver: every delivery is verified before it is trusted
let secret = '';
let ended;
const ending = new Promise((resolve) => (ended = resolve));
const receiver = http.createServer(async (req, res) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  try {
    const event = await client.webhooks.verify(Buffer.concat(chunks), req.headers, secret);
    res.writeHead(204).end();
    if (event.type === 'call.ended') ended(event);
  } catch (error) {
    res.writeHead(400).end(String(error));
  }
});
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));

// Create an agent that sends its call events to the receiver
const agent = await client.agents.create({
  name: 'Front desk',
  prompt: 'You are the receptionist of Acme.',
  first_message: 'Hello, Acme here. How can I help?',
  webhook_url: `http://127.0.0.1:${receiver.address().port}/webhooks`,
});
secret = agent.webhook_secret;

// Place a sandbox call: the simulated callee says the script through real audio
const call = await client.calls.create({
  agent_id: agent.id,
  to: '+15550100200',
  simulation: { caller_script: ['Hi, what are your opening hours?', 'Thanks, goodbye!'] },
});

// Wait for it to end, then download its MP3 as a stream
const done = await client.calls.waitUntilEnded(call.id);
console.log(`call ${done.status} after ${done.duration_seconds} s`);
const recording = await client.calls.downloadRecording(call.id);
await pipeline(Readable.fromWeb(recording.stream()), fs.createWriteStream('call.mp3'));
console.log(`recording saved: ${fs.statSync('call.mp3').size} bytes`);

// The signed call.ended webhook arrived and verified
const event = await ending;
console.log(`verified webhook ${event.type}: ${event.data.status}`);
receiver.close();
