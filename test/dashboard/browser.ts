import assert from 'node:assert/strict';
import axe from 'axe-core';
import type { Page } from 'playwright-core';
import { artifact } from '../../src/modules/widgets/browser-helpers.ts';
import type { TestApp } from '../support/app.ts';
import { keyboardProblems } from './keyboard.ts';

// The dashboard browser tests' helpers: each page's checks (axe-core's WCAG 2.1 A/AA rules, colour
// contrast included, with no serious or critical violation; no horizontal scrolling at 375 px;
// screenshots at 375 and 1280 px; every control reached by the Tab key at 1280 px: keyboard.ts), the signed-in tab's session, a page's heading, a page opened
// through its loading and error states.

// What sticks out to the right of the page (the layout viewport: without the scrollbar).
const OVERFLOW = `(() => {
  const width = document.documentElement.clientWidth;
  return [...document.querySelectorAll('body *')]
    .filter((e) => e.getBoundingClientRect().right > width + 0.5 && !e.closest('.table-wrap'))
    .map((e) => e.tagName.toLowerCase() + (e.className ? '.' + e.className : '') + ' ' + Math.round(e.getBoundingClientRect().right) + '/' + width)
    .slice(0, 5);
})()`;

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown[] }>;
}

/** axe-core's serious and critical WCAG 2.1 A/AA violations on the page as it is. */
async function accessibilityViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern.
  if (!(await page.evaluate('typeof window.axe !== "undefined"'))) await page.evaluate(axe.source);
  const violations = (await page.evaluate("axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } }).then((r) => r.violations)")) as AxeViolation[];
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.help}) at ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`);
}

// A whole page's screenshot waits for a frame that a loaded machine's Chromium may draw late (in CI,
// at a load of 6 to 8, journeys' 375 px screenshot passed its page's 15 s): a minute of its own, and
// CSS animations (the loading states' spinners) stopped at their end, so no frame is awaited for them.
const SCREENSHOT = { fullPage: true, animations: 'disabled', timeout: 60_000 } as const;

export async function checkPage(page: Page, name: string) {
  const violations = await accessibilityViolations(page);
  assert.deepEqual(violations, [], `${name}: accessibility violations`);
  await page.setViewportSize({ width: 375, height: 800 });
  const [scrollWidth, clientWidth] = (await page.evaluate('[document.documentElement.scrollWidth, document.documentElement.clientWidth]')) as [number, number];
  const sticking = (await page.evaluate(OVERFLOW)) as string[];
  await page.screenshot({ path: artifact(`dashboard-${name}-375.png`), ...SCREENSHOT });
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.screenshot({ path: artifact(`dashboard-${name}-1280.png`), ...SCREENSHOT });
  assert.ok(scrollWidth <= clientWidth && sticking.length === 0, `${name}: ${scrollWidth} px wide at 375 px; sticking out: ${sticking.join(', ')}`);
  assert.deepEqual(await keyboardProblems(page, name), [], `${name}: keyboard`);
}

/** The signed-in tab's access token and workspace (to check the UI's work through the API). */
export async function sessionOf(t: TestApp, page: Page) {
  const tokens = JSON.parse(String(await page.evaluate("localStorage.getItem('vap.tokens')"))) as { accessToken: string };
  const chosen = (await page.evaluate("localStorage.getItem('vap.workspace')")) as string | null;
  const list = await t.request({ method: 'GET', url: '/v1/workspaces', token: tokens.accessToken });
  return { token: tokens.accessToken, workspaceId: chosen ?? (list.json().data[0].id as string) };
}

export const heading = (page: Page, name: string) => page.getByRole('heading', { level: 1, name }).waitFor();

/** Plays the page's audio element (muted, at 16×) to its end: its duration once it is `ended`. */
export async function playToEnd(page: Page): Promise<number> {
  return (await page.evaluate(`new Promise((resolve, reject) => {
    const audio = document.querySelector('audio');
    audio.muted = true;
    audio.addEventListener('ended', () => resolve(audio.duration), { once: true });
    audio.addEventListener('error', () => reject(new Error('audio error ' + audio.error?.code)), { once: true });
    audio.playbackRate = 16;
    audio.play().catch(reject);
  })`)) as number;
}


/**
 * The page's GETs of `path` (a pathname, or a pattern of one) held until `answer()` (the loading
 * state), then answered 500 until `restore()` (the error state and its retry).
 */
export async function failing(page: Page, path: string | RegExp) {
  const matches = (url: URL) => (typeof path === 'string' ? url.pathname === path : path.test(url.pathname));
  let answer = () => {};
  const held = new Promise<void>((resolve) => {
    answer = resolve;
  });
  await page.route(matches, async (route) => {
    if (route.request().method() !== 'GET') return route.continue();
    await held;
    await route.fulfill({ status: 500, contentType: 'application/problem+json', body: JSON.stringify({ code: 'internal', status: 500, detail: 'Something broke on our side.' }) });
  });
  return { answer, restore: () => page.unroute(matches) };
}

/**
 * Opens a page through the navigation link `link` (its heading is the same): its loading state,
 * its error state, then (retried) its content. Checked as `<name>-loading` and `<name>-error`.
 */
export async function openThroughStates(page: Page, link: string, path: string | RegExp, name: string) {
  const broken = await failing(page, path);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: link, exact: true }).click();
  await heading(page, link);
  await page.locator('.state-loading').first().waitFor();
  await checkPage(page, `${name}-loading`);
  broken.answer();
  await page.getByRole('alert').filter({ hasText: 'Something broke on our side.' }).waitFor();
  await checkPage(page, `${name}-error`);
  await broken.restore();
  await page.getByRole('alert').filter({ hasText: 'Something broke on our side.' }).getByRole('button', { name: 'Try again' }).click();
}

/** The page's uncaught errors and console errors (but failed resource loads, which the error states cause on purpose), as they come, into `errors`. */
export function collectPageErrors(page: Page, errors: string[] = []): string[] {
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error' && !/Failed to load resource/.test(message.text())) errors.push(message.text());
  });
  return errors;
}
