import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import alawmulaw from 'alawmulaw';
import OpenAI from 'openai';
import type { RealtimeServerEvent } from 'openai/resources/realtime/realtime';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import WebSocket from 'ws';
import { waitFor } from './caller.ts';
import { startFakeRealtimeServer } from './server.ts';

// The fake Realtime server heard through the `openai` SDK's own realtime client, which connects
// only with wss:// (so the fake serves TLS here with a throwaway certificate): the SDK's URL, its
// auth header and its event handling accept the fake as they would OpenAI's server.

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fake-realtime-tls-'));
execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')], { stdio: 'ignore' });
const cert = fs.readFileSync(path.join(dir, 'cert.pem'), 'utf8');
const fake = await startFakeRealtimeServer({ apiKey: 'sk-sdk', tls: { key: fs.readFileSync(path.join(dir, 'key.pem'), 'utf8'), cert } });
after(async () => {
  await fake.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('the fake Realtime server', () => {
  it("speaks to the openai SDK's realtime client: session, a response with audio and its transcript, errors as events", async () => {
    const client = new OpenAI({ apiKey: 'sk-sdk', baseURL: fake.url });
    const rt = await OpenAIRealtimeWS.create(client, { model: 'gpt-realtime', options: { ca: cert } });
    const events: RealtimeServerEvent[] = [];
    const errors: string[] = [];
    rt.on('event', (event) => events.push(event));
    rt.on('error', (error) => errors.push(error.error?.code ?? error.message));
    await waitFor(() => events.some((e) => e.type === 'session.created'));
    rt.send({ type: 'session.update', session: { type: 'realtime', instructions: 'Be brief.', audio: { output: { voice: 'cedar' } } } });
    fake.reply(({ instructions }) => ({ text: instructions === 'Greet the caller.' ? 'Hello caller' : 'wrong' }));
    rt.send({ type: 'response.create', response: { instructions: 'Greet the caller.' } });
    await waitFor(() => events.some((e) => e.type === 'response.done'));
    rt.send({ type: 'response.cancel' });
    await waitFor(() => errors.length === 1);
    rt.close();
    assert.equal(fake.connections.at(-1)?.path, '/v1/realtime?model=gpt-realtime');
    const types = events.map((e) => e.type);
    assert.equal(types[0], 'session.created');
    assert.equal(types[1], 'session.updated');
    const updated = events[1].type === 'session.updated' ? events[1].session : null;
    assert.equal(updated && 'instructions' in updated && updated.instructions, 'Be brief.');
    assert.deepEqual(
      types.slice(2).filter((t) => !t.endsWith('.delta')),
      ['response.created', 'response.output_item.added', 'conversation.item.added', 'response.content_part.added', 'response.output_audio.done', 'response.output_audio_transcript.done', 'response.content_part.done', 'response.output_item.done', 'conversation.item.done', 'response.done', 'error'],
    );
    const audio = events.flatMap((e) => (e.type === 'response.output_audio.delta' ? [Buffer.from(e.delta, 'base64').length / 2] : []));
    assert.equal(audio.reduce((a, b) => a + b, 0), 24 * 600, 'two words of 300 ms at 24 kHz');
    const done = events.find((e) => e.type === 'response.done');
    assert.equal(done?.type === 'response.done' && done.response.status, 'completed');
    assert.deepEqual(errors, ['response_cancel_not_active']);
  });

  it('refuses what the real server refuses: a bad key, invalid JSON, an unknown event, an empty commit, a second response', async () => {
    const refused = new WebSocket(`${fake.url.replace('https', 'wss')}/realtime?model=gpt-realtime`, { ca: cert, headers: { Authorization: 'Bearer nope' } });
    const status = await new Promise((resolve) => refused.on('unexpected-response', (_req, res) => resolve(res.statusCode)));
    assert.equal(status, 401);
    const ws = new WebSocket(`${fake.url.replace('https', 'wss')}/realtime?model=gpt-realtime`, { ca: cert, headers: { Authorization: 'Bearer sk-sdk' } });
    const codes: string[] = [];
    ws.on('message', (data) => {
      const event = JSON.parse(String(data));
      if (event.type === 'error') codes.push(event.error.code);
    });
    await new Promise((resolve) => ws.on('open', resolve));
    fake.set({ audioChunkIntervalMs: 50 });
    fake.reply({ text: 'one two three four five six' });
    ws.send('{not json');
    ws.send(JSON.stringify({ type: 'input_audio_buffer.flush' }));
    ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: Buffer.alloc(100).toString('base64') }));
    ws.send(JSON.stringify({ type: 'input_audio_buffer.commit' }));
    ws.send(JSON.stringify({ type: 'response.create' }));
    ws.send(JSON.stringify({ type: 'response.create' }));
    await waitFor(() => codes.length === 4);
    fake.set({ audioChunkIntervalMs: 0 });
    ws.close();
    assert.deepEqual(codes, ['invalid_json', 'invalid_value', 'input_audio_buffer_commit_empty', 'conversation_already_has_active_response']);
  });

  it('honours the session audio formats: G.711 mu-law at 8 kHz in (its VAD on that clock) and out; PCM at another rate refused', async () => {
    const ws = new WebSocket(`${fake.url.replace('https', 'wss')}/realtime?model=gpt-realtime`, { ca: cert, headers: { Authorization: 'Bearer sk-sdk' } });
    const events: RealtimeServerEvent[] = [];
    ws.on('message', (data) => events.push(JSON.parse(String(data))));
    await waitFor(() => events.some((e) => e.type === 'session.created'));
    ws.send(JSON.stringify({ type: 'session.update', session: { type: 'realtime', audio: { input: { format: { type: 'audio/pcm', rate: 16000 } } } } }));
    const refused = await waitFor(() => events.find((e) => e.type === 'error'));
    assert.equal(refused.type === 'error' && refused.error.param, 'session.audio.input.format');
    const pcmu = { type: 'audio/pcmu' };
    ws.send(JSON.stringify({ type: 'session.update', session: { type: 'realtime', audio: { input: { format: pcmu }, output: { format: pcmu } } } }));
    const updated = await waitFor(() => events.find((e) => e.type === 'session.updated'));
    const formats = (updated as unknown as { session: { audio: { input: { format: unknown }; output: { format: unknown } } } }).session.audio;
    assert.deepEqual([formats.input.format, formats.output.format], [pcmu, pcmu], 'a format is replaced whole');
    fake.hear('Hello');
    fake.reply({ text: 'Hi there' });
    const tone = Uint8Array.from({ length: 8 * 400 }, (_, i) => alawmulaw.mulaw.encodeSample(Math.round(8000 * Math.sin((2 * Math.PI * 300 * i) / 8000))));
    const silence = new Uint8Array(8 * 600).fill(0xff);
    for (const chunk of [tone, silence]) {
      for (let at = 0; at < chunk.length; at += 160) ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: Buffer.from(chunk.subarray(at, at + 160)).toString('base64') }));
    }
    await waitFor(() => events.some((e) => e.type === 'response.done'));
    ws.close();
    const started = events.find((e) => e.type === 'input_audio_buffer.speech_started');
    const stopped = events.find((e) => e.type === 'input_audio_buffer.speech_stopped');
    assert.equal(started?.type === 'input_audio_buffer.speech_started' && started.audio_start_ms, 0);
    assert.ok(stopped?.type === 'input_audio_buffer.speech_stopped' && stopped.audio_end_ms >= 900 && stopped.audio_end_ms <= 920, JSON.stringify(stopped));
    const audio = Buffer.concat(events.flatMap((e) => (e.type === 'response.output_audio.delta' ? [Buffer.from(e.delta, 'base64')] : [])));
    assert.equal(audio.length, 8 * 600, 'two words of 300 ms, a byte a sample at 8 kHz');
    const peak = alawmulaw.mulaw.decode(new Uint8Array(audio)).reduce((max, s) => Math.max(max, Math.abs(s)), 0);
    assert.ok(peak > 3500 && peak < 4500, `the tone decodes from mu-law (peak ${peak})`);
  });
});
