import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp } from '../../../test/support/fixtures.ts';
import { freePort } from '../../../test/support/ports.ts';
import { as, createCallAgent } from '../calls/test-helpers.ts';
import { artifact, launchChromium, pageServer, thirdPartyPage } from './browser-helpers.ts';
import { createWidget } from './test-helpers.ts';

// A voice call from the widget in Chromium with a fake microphone (a WAV of speech made with
// espeak-ng and sox now): getUserMedia and the AudioWorklet stream PCM16 over the built-in media
// WebSocket, and the agent's greeting arrives and is played (the widget counts frames received
// and played on its host element). The session is the workspace's, ended when the visitor hangs up.

interface PageElement {
  dataset: Record<string, string | undefined>;
  shadowRoot: { querySelectorAll(selector: string): ArrayLike<{ textContent: string | null }> } | null;
}
declare const document: { querySelector(selector: string): PageElement | null };

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-voice-'));
const raw = path.join(work, 'raw.wav');
const speech = path.join(work, 'speech.wav');
execFileSync('espeak-ng', ['-v', 'en-us', '-s', '150', '-w', raw, 'Hello there. What time do you open tomorrow morning?']);
// Silence first: the greeting plays in full before the "caller" speaks (speech over it would barge
// in), however long a loaded machine takes to start the call (8 s of it were once too few).
execFileSync('sox', [raw, '-r', '48000', '-c', '1', '-b', '16', speech, 'pad', '30', '1']);

const port = await freePort();
const platformUrl = `http://127.0.0.1:${port}`;
const t = await buildTestApp({ env: { PUBLIC_BASE_URL: platformUrl } });
await t.app.listen({ port, host: '127.0.0.1' });

describe('a widget voice call in Chromium', async () => {
  const browser = await launchChromium([
    '--use-fake-device-for-media-stream',
    '--use-fake-ui-for-media-stream',
    `--use-file-for-fake-audio-capture=${speech}`,
    '--autoplay-policy=no-user-gesture-required',
  ]);

  it('starts a session from the fake microphone and hears the greeting arrive and play', async () => {
    const owner = await signUp(t);
    const agent = await createCallAgent(t, owner);
    const placeholder = await createWidget(t, owner, { agent_id: agent.id, mode: 'both', theme: { title: 'Talk to Ada' } });
    const site = await pageServer(thirdPartyPage(`<script src="${platformUrl}/v1/widgets/${placeholder.id}/embed.js" async></script>`));
    const patched = await t.request({ method: 'PATCH', url: `/v1/widgets/${placeholder.id}`, ...as(owner), payload: { allowed_origins: [site] } });
    assert.equal(patched.statusCode, 200, patched.body);

    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${site}/`);
    await page.getByRole('button', { name: 'Open chat: Talk to Ada' }).click();
    const call = page.getByRole('button', { name: 'Start voice call' });
    await call.click();

    // The greeting: audio frames received from the media WebSocket and played by the worklet.
    await page.waitForFunction(() => Number(document.querySelector('[data-vap-widget]')?.dataset.framesPlayed) >= 25, undefined, { timeout: 30_000 });
    const counters = await page.evaluate(() => {
      const host = document.querySelector('[data-vap-widget]');
      return { received: Number(host?.dataset.framesReceived), played: Number(host?.dataset.framesPlayed), voice: host?.dataset.voice };
    });
    assert.equal(counters.voice, 'live');
    assert.ok(counters.received >= counters.played, JSON.stringify(counters));
    // The greeting's transcript line, once spoken, is shown as text in the panel.
    await page.waitForFunction(
      () => Array.from(document.querySelector('[data-vap-widget]')?.shadowRoot?.querySelectorAll('.msg.agent[data-source="voice"]') ?? []).some((n) => (n.textContent ?? '').includes('Ada from the bistro')),
      undefined,
      { timeout: 30_000 },
    );
    assert.equal(await page.getByRole('button', { name: 'End voice call' }).getAttribute('aria-pressed'), 'true');
    await page.screenshot({ path: artifact('widget-voice-1280.png'), animations: 'disabled' });

    // The session is the workspace's, carried by a web call; hanging up ends it.
    const sessions = await t.request({ method: 'GET', url: `/v1/voice/sessions?agent_id=${agent.id}`, ...as(owner) });
    assert.equal(sessions.json().data.length, 1);
    const session = sessions.json().data[0];
    assert.deepEqual(session.metadata, { widget_id: placeholder.id });
    assert.ok(session.connected_at, 'the browser connected to the media WebSocket');
    await page.getByRole('button', { name: 'End voice call' }).click();
    await page.getByRole('button', { name: 'Start voice call' }).waitFor();
    const deadline = Date.now() + 20_000;
    let ended = session;
    while (ended.status !== 'ended' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      ended = (await t.request({ method: 'GET', url: `/v1/voice/sessions/${session.id}`, ...as(owner) })).json();
    }
    assert.equal(ended.status, 'ended', JSON.stringify(ended));
    assert.equal(ended.end_reason, 'client_closed');
    assert.ok(ended.duration_sec > 0);
    const transcript = await t.request({ method: 'GET', url: `/v1/voice/sessions/${session.id}/transcript`, ...as(owner) });
    assert.match(transcript.json().transcript[0].text, /Ada from the bistro/);
    assert.deepEqual(errors, []);
    await page.close();
  });
});
