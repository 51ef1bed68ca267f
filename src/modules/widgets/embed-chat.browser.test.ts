import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp } from '../../../test/support/fixtures.ts';
import { freePort } from '../../../test/support/ports.ts';
import { artifact, launchChromium, pageServer, thirdPartyPage } from './browser-helpers.ts';
import { createKbAgent, createWidget } from './test-helpers.ts';

// The widget in a real browser: a plain third-party page on another origin embeds the script,
// the visitor opens the panel and chats (one answer from the agent's knowledge base), HTML in a
// message stays text, and the same page on an origin the widget does not allow gets no widget.

// The page's globals as the functions run by page.evaluate see them (the project compiles without the DOM library).
interface PageElement {
  textContent: string | null;
  tagName: string;
  getAttribute(name: string): string | null;
}
interface PageShadowRoot {
  mode: string;
  activeElement: PageElement | null;
  querySelectorAll(selector: string): ArrayLike<PageElement>;
}
declare const document: { querySelector(selector: string): { shadowRoot: PageShadowRoot | null } | null };
declare const window: { __widgetPwned?: number };

const port = await freePort();
const platformUrl = `http://127.0.0.1:${port}`;
const t = await buildTestApp({ env: { PUBLIC_BASE_URL: platformUrl } });
await t.app.listen({ port, host: '127.0.0.1' });

const owner = await signUp(t);
const agent = await createKbAgent(t, owner);
const embedTag = (id: string) => `<script src="${platformUrl}/v1/widgets/${id}/embed.js" async></script>`;

/** The agent messages shown in the panel, in order. */
const agentMessages = (page: Page) => page.locator('[data-vap-widget] .msg.agent:not(.typing)').allTextContents();

async function sendMessage(page: Page, text: string) {
  const before = (await agentMessages(page)).length;
  await page.locator('[data-vap-widget] textarea').fill(text);
  await page.keyboard.press('Enter');
  await page.waitForFunction(
    (count) => document.querySelector('[data-vap-widget]')?.shadowRoot?.querySelectorAll('.msg.agent:not(.typing)').length === count,
    before + 1,
  );
  return (await agentMessages(page)).at(-1) ?? '';
}

describe('the widget in Chromium', async () => {
  const browser = await launchChromium();

  it('chats from a third-party page on another origin, answers from the knowledge base, renders HTML as text', async () => {
    const site = await pageServer('');
    const widget = await createWidget(t, owner, { agent_id: agent.id, theme: { title: 'Ask the Blue Fern', greeting: 'Hello! Ask me about our hours or parking.', primary_color: '#2f4f3f' } });
    // The page server answers every path with the page; the widget allows only this origin.
    const patched = await t.request({ method: 'PATCH', url: `/v1/widgets/${widget.id}`, token: owner.accessToken, workspaceId: owner.workspaceId, payload: { allowed_origins: [site] } });
    assert.equal(patched.statusCode, 200, patched.body);
    const allowedSite = await pageServer(thirdPartyPage(embedTag(widget.id)));
    await t.request({ method: 'PATCH', url: `/v1/widgets/${widget.id}`, token: owner.accessToken, workspaceId: owner.workspaceId, payload: { allowed_origins: [allowedSite] } });

    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${allowedSite}/`);
    await page.getByRole('button', { name: 'Open chat: Ask the Blue Fern' }).waitFor();
    const launcher = page.locator('[data-vap-widget] button[aria-controls^="vap-panel-"]');
    // The widget lives in an OPEN shadow root.
    assert.equal(await page.evaluate(() => document.querySelector('[data-vap-widget]')?.shadowRoot?.mode), 'open');
    assert.equal(await launcher.getAttribute('aria-expanded'), 'false');

    // Keyboard: the launcher opens the panel, focus goes to the message box.
    await launcher.focus();
    await page.keyboard.press('Enter');
    assert.equal(await launcher.getAttribute('aria-expanded'), 'true');
    assert.ok(await page.getByRole('dialog', { name: 'Ask the Blue Fern' }).isVisible());
    assert.equal(await page.evaluate(() => document.querySelector('[data-vap-widget]')?.shadowRoot?.activeElement?.tagName), 'TEXTAREA');
    assert.deepEqual(await agentMessages(page), ['Hello! Ask me about our hours or parking.']);

    const hours = await sendMessage(page, 'When do you open in the morning?');
    assert.match(hours, /nine in the morning/, 'answered from the knowledge base');
    const parking = await sendMessage(page, 'Where can guests park the car?');
    assert.match(parking, /Elm Street/);
    await page.screenshot({ path: artifact('widget-chat-1280.png'), animations: 'disabled' });

    // HTML in a message is text: no element made, no handler run.
    const hostile = '<img src=x onerror="window.__widgetPwned = 1"><script>window.__widgetPwned = 2</script>';
    await sendMessage(page, hostile);
    const shown = await page.evaluate(() => {
      const root = document.querySelector('[data-vap-widget]')?.shadowRoot;
      return { users: Array.from(root?.querySelectorAll('.msg.user') ?? []).map((n) => n.textContent), imgs: root?.querySelectorAll('img').length, pwned: window.__widgetPwned };
    });
    assert.equal(shown.users.at(-1), hostile);
    assert.equal(shown.imgs, 0);
    assert.equal(shown.pwned, undefined);

    // The conversation is the owner's to read: the two questions and the hostile text, kept as sent.
    const list = await t.request({ method: 'GET', url: `/v1/widgets/${widget.id}/conversations`, token: owner.accessToken, workspaceId: owner.workspaceId });
    assert.equal(list.json().data.length, 1);
    const detail = await t.request({ method: 'GET', url: `/v1/widgets/${widget.id}/conversations/${list.json().data[0].id}`, token: owner.accessToken, workspaceId: owner.workspaceId });
    assert.deepEqual(
      detail.json().messages.filter((m: { role: string }) => m.role === 'user').map((m: { text: string }) => m.text),
      ['When do you open in the morning?', 'Where can guests park the car?', hostile],
    );

    // Escape closes the panel and gives focus back to the launcher.
    await page.keyboard.press('Escape');
    assert.equal(await launcher.getAttribute('aria-expanded'), 'false');
    assert.equal(await page.evaluate(() => document.querySelector('[data-vap-widget]')?.shadowRoot?.activeElement?.getAttribute('aria-controls')?.startsWith('vap-panel-')), true);

    // A phone-sized screen: the panel fits in 375 px.
    await page.setViewportSize({ width: 375, height: 740 });
    await launcher.click();
    const box = await page.getByRole('dialog').boundingBox();
    assert.ok(box && box.x >= 0 && box.x + box.width <= 375 && box.y >= 0, `panel at ${JSON.stringify(box)}`);
    await page.screenshot({ path: artifact('widget-chat-375.png'), animations: 'disabled' });
    assert.deepEqual(errors, []);
    await page.close();
  });

  it('preview: the widget works on its own preview page, under the branding of the Host it is served on', async () => {
    const widget = await createWidget(t, owner, { agent_id: agent.id, theme: { title: 'Ask the Blue Fern' }, allowed_origins: ['https://www.example.com'] });
    const branding = await t.request({ method: 'PUT', url: '/v1/branding', token: owner.accessToken, workspaceId: owner.workspaceId, payload: { domain: '127.0.0.1', name: 'Blue Fern Voice', primary_color: '#2f4f3f', accent_color: '#1f2937' } });
    assert.equal(branding.statusCode, 200, branding.body);
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    await page.goto(`${platformUrl}/v1/widgets/${widget.id}/preview`);
    assert.equal(await page.locator('header .brand').textContent(), 'Blue Fern Voice');
    // Same origin as the API: allowed whatever allowed_origins says, and within the page's CSP.
    await page.getByRole('button', { name: 'Open chat: Ask the Blue Fern' }).click();
    assert.match(await sendMessage(page, 'What time do you close in the evening?'), /ten in the evening/);
    await page.screenshot({ path: artifact('widget-preview-1280.png'), animations: 'disabled' });
    assert.deepEqual(errors, []);
    await page.close();
  });

  it('adds nothing to the same page on an origin the widget does not allow', async () => {
    const widget = await createWidget(t, owner, { agent_id: agent.id, allowed_origins: ['https://www.example.com'] });
    const site = await pageServer(thirdPartyPage(embedTag(widget.id)));
    const page = await browser.newPage();
    const failed: string[] = [];
    page.on('requestfailed', (request) => {
      if (request.url().endsWith(`/v1/widgets/${widget.id}/config`)) failed.push(request.url());
    });
    const warned = page.waitForEvent('console', (message) => message.text().includes('not shown'));
    await page.goto(`${site}/`);
    await warned;
    // The browser saw a refusal without CORS headers (a failed request); the platform said 403.
    assert.equal(failed.length, 1);
    const direct = await fetch(`${platformUrl}/v1/widgets/${widget.id}/config`, { headers: { origin: site } });
    assert.equal(direct.status, 403);
    assert.equal(direct.headers.get('access-control-allow-origin'), null);
    assert.equal(await page.locator('[data-vap-widget]').count(), 0);
    await page.screenshot({ path: artifact('widget-refused-origin.png'), animations: 'disabled' });
    await page.close();
  });
});
