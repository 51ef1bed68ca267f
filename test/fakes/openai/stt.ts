import http from 'node:http';
import type { AddressInfo } from 'node:net';

// A local server speaking OpenAI's POST /v1/audio/transcriptions (multipart: file, model,
// language, response_format) for tests. It cannot hear: it answers the texts it was given, in
// order, and records each request's fields and the WAV it received. A request whose audio extends
// the previous one's (the platform sent the caller's words early, at a pause, then the longer
// utterance) is the same utterance heard again: it gets the same text, as a real recogniser's.

export interface FakeSttRequest {
  model: string;
  language?: string;
  responseFormat?: string;
  filename: string;
  wav: Buffer;
  authorization?: string;
}

export async function startFakeSttServer(options: { delayMs?: number; status?: number } = {}) {
  const requests: FakeSttRequest[] = [];
  const answers: string[] = [];
  let { delayMs = 0, status = 200 } = options;
  let previous: { audio: Buffer; text: string } | null = null;
  /** The text for one utterance's PCM: the previous one's if this audio extends it, else the next given. */
  const answerFor = (audio: Buffer) => {
    const extended = previous !== null && audio.length > previous.audio.length && audio.subarray(0, previous.audio.length).equals(previous.audio);
    const text = extended && previous ? previous.text : (answers.shift() ?? '');
    previous = { audio, text };
    return text;
  };
  const server = http.createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/v1/audio/transcriptions') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } }));
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      // The multipart body parsed by the platform's own Fetch implementation (undici).
      const form = await new Response(Buffer.concat(chunks), { headers: { 'content-type': String(req.headers['content-type']) } }).formData();
      const file = form.get('file') as File;
      const wav = Buffer.from(await file.arrayBuffer());
      requests.push({
        model: String(form.get('model')),
        language: form.get('language')?.toString(),
        responseFormat: form.get('response_format')?.toString(),
        filename: file.name,
        wav,
        authorization: req.headers.authorization,
      });
      setTimeout(() => {
        if (status !== 200) return void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'the model is overloaded', type: 'server_error' } }));
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ text: answerFor(wav.subarray(44)) }));
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    /** Texts the next transcriptions answer, in order. */
    say: (...texts: string[]) => void answers.push(...texts),
    set: (next: { delayMs?: number; status?: number }) => {
      delayMs = next.delayMs ?? delayMs;
      status = next.status ?? status;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
