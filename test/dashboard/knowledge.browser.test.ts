import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { launchChromium } from '../../src/modules/widgets/browser-helpers.ts';
import { buildTestApp } from '../support/app.ts';
import { uniqueEmail } from '../support/fixtures.ts';
import { freePort } from '../support/ports.ts';
import { checkPage, heading, openThroughStates, sessionOf, collectPageErrors } from './browser.ts';

// The knowledge-base, phone-number and do-not-call pages in Debian's Chromium against the real
// platform on 127.0.0.1, one page walking them in order: a knowledge base filled with a real
// markdown file (multipart), a web page and text, each source followed to ready (or failed), a
// refresh followed by polling, a test query finding the file's phrase; a sandbox number searched,
// bought, assigned to an agent, taken off it and released; do-not-call numbers checked, added,
// imported and removed. Every effect is checked through the API; every page state reached is
// checked for accessibility and for 375 px.

const port = await freePort();
const origin = `http://127.0.0.1:${port}`;
const t = await buildTestApp({ env: { PUBLIC_BASE_URL: origin } });
await t.app.listen({ port, host: '127.0.0.1' });

// The web pages a URL source fetches: /parking (held while `holdParking` is set), /missing (404).
let holdParking: Promise<void> | undefined;
let parkingHits = 0;
const site = http.createServer((request, response) => {
  if (request.url === '/parking') {
    parkingHits++;
    void (holdParking ?? Promise.resolve()).then(() =>
      response
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end('<!doctype html><html><head><title>Parking</title></head><body><p>Parking is free in the courtyard behind the station after six.</p></body></html>'),
    );
    return;
  }
  response.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
});
await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
after(() => new Promise<void>((resolve) => site.close(() => resolve())));
const siteUrl = `http://127.0.0.1:${(site.address() as { port: number }).port}`;

const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-kb-'));
after(() => fs.rmSync(folder, { recursive: true, force: true }));
const policyFile = path.join(folder, 'returns-policy.md');
fs.writeFileSync(policyFile, '# Returns and warranty\n\nThe Zephyr blender comes with a seven-year warranty covering the motor and the jug.\n\nRefunds are paid back to the original card within 14 days of the return.\n');

const session = (page: Page) => sessionOf(t, page);
const api = async (page: Page, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) => {
  const { token, workspaceId } = await session(page);
  return t.request({ method, url, token, workspaceId, ...(payload ? { payload } : {}) });
};

describe('knowledge bases, phone numbers and do-not-call in Chromium', async () => {
  const browser = await launchChromium();
  const page = await browser.newPage();
  page.setDefaultTimeout(15_000);
  const errors = collectPageErrors(page);
  let baseId = '';

  it('signs up', async () => {
    await page.goto(`${origin}/signup`);
    await page.getByLabel('Name').fill('Grace');
    await page.getByLabel('Email').fill(uniqueEmail('dash-kb'));
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Create account' }).click();
    await heading(page, 'Agents');
  });

  it('lists knowledge bases (loading, error, empty), creates one and opens it', async () => {
    await openThroughStates(page, 'Knowledge bases', '/v1/knowledge-base', 'knowledge-bases');
    await page.getByText('No knowledge bases yet.').waitFor();
    await checkPage(page, 'knowledge-bases-empty');

    await page.getByLabel("New knowledge base's name").fill('Help centre');
    await page.getByLabel('Description').fill('What the shop agents answer from');
    await page.getByRole('button', { name: 'Create knowledge base' }).click();
    await heading(page, 'Help centre');
    baseId = new URL(page.url()).pathname.split('/').at(-1)!;
    assert.match(baseId, /^kb_/);
    await page.getByText('No sources yet.').waitFor();
    await checkPage(page, 'knowledge-base-empty');
    const saved = (await api(page, 'GET', `/v1/knowledge-base/${baseId}`)).json();
    assert.equal(saved.name, 'Help centre');
    assert.equal(saved.description, 'What the shop agents answer from');
    assert.equal(saved.language, 'en');

    await page.getByRole('link', { name: 'All knowledge bases' }).click();
    await page.getByRole('row').filter({ hasText: 'Help centre' }).getByText('empty').waitFor();
    await page.getByRole('link', { name: 'Help centre' }).click();
    await heading(page, 'Help centre');
  });

  it('uploads a markdown file, adds a web page and a text: each becomes ready; a missing page fails', async () => {
    // A wrong kind of file is refused before it is sent.
    await page.getByLabel('File to upload').setInputFiles({ name: 'photo.png', mimeType: 'image/png', buffer: Buffer.from('png') });
    await page.getByRole('button', { name: 'Upload file' }).click();
    await page.getByText(/This kind of file cannot be read/).waitFor();
    await page.getByLabel('File to upload').setInputFiles(policyFile);
    await page.getByRole('button', { name: 'Upload file' }).click();
    await page.getByText('Added “returns-policy.md”: ready').waitFor();

    await page.getByRole('tab', { name: 'Web page' }).click();
    await page.getByLabel('Page address').fill(`${siteUrl}/parking`);
    await page.getByRole('button', { name: 'Add web page' }).click();
    await page.getByText('Added “Parking”: ready').waitFor();
    await page.getByLabel('Page address').fill(`${siteUrl}/missing`);
    await page.getByLabel('Title (optional)').fill('Old prices');
    await page.getByRole('button', { name: 'Add web page' }).click();
    await page.getByText('Added “Old prices”: failed').waitFor();

    // The kinds of source by keyboard: arrow keys move between the tabs.
    await page.getByRole('tab', { name: 'Web page' }).focus();
    await page.keyboard.press('ArrowRight');
    assert.equal(await page.getByRole('tab', { name: 'Text' }).getAttribute('aria-selected'), 'true');
    await page.getByRole('button', { name: 'Add text' }).click();
    await page.getByText('Give the text a title.').waitFor();
    await page.getByLabel('Title', { exact: true }).fill('Opening hours');
    await page.getByLabel('Text to add').fill('The shop opens at nine in the morning and closes at six in the evening, Monday to Saturday.');
    await page.getByRole('button', { name: 'Add text' }).click();
    await page.getByText('Added “Opening hours”: ready').waitFor();

    await page.getByTestId('source-tally').getByText('4 sources: 3 ready, 1 failed').waitFor();
    const row = (text: string) => page.getByRole('row').filter({ hasText: text });
    await row('returns-policy.md').getByText('ready', { exact: true }).waitFor();
    await row('Old prices').getByText('returned HTTP 404').waitFor();
    await page.locator('[data-field="Chunks"]').filter({ hasText: /^[1-9]/ }).waitFor();
    await checkPage(page, 'knowledge-base-sources');

    // The chunks the file was cut into.
    await page.getByRole('button', { name: 'Show chunks: returns-policy.md' }).click();
    const chunks = page.getByRole('list', { name: 'Chunks of returns-policy.md' });
    await chunks.getByRole('listitem').filter({ hasText: 'seven-year warranty covering the motor' }).waitFor();
    await checkPage(page, 'knowledge-base-chunks');
    await page.getByRole('button', { name: 'Close', exact: true }).click();
    await chunks.waitFor({ state: 'detached' });

    const sources = (await api(page, 'GET', `/v1/knowledge-base/${baseId}/sources`)).json().data as Array<{ type: string; title: string; filename?: string; url?: string; status: string; chunk_count: number }>;
    const byTitle = new Map(sources.map((s) => [s.title, s]));
    assert.deepEqual([...byTitle.keys()].sort(), ['Old prices', 'Opening hours', 'Parking', 'returns-policy.md']);
    assert.deepEqual(byTitle.get('returns-policy.md'), { ...byTitle.get('returns-policy.md'), type: 'file', filename: 'returns-policy.md', status: 'ready' });
    assert.equal(byTitle.get('Parking')?.status, 'ready');
    assert.equal(byTitle.get('Parking')?.url, `${siteUrl}/parking`);
    assert.equal(byTitle.get('Old prices')?.status, 'failed');
    assert.equal(byTitle.get('Opening hours')?.type, 'text');
    for (const title of ['returns-policy.md', 'Parking', 'Opening hours']) assert.ok(Number(byTitle.get(title)?.chunk_count) >= 1, `${title} has chunks`);
  });

  it('follows a source being processed by polling until it is ready', async () => {
    let release = () => {};
    holdParking = new Promise<void>((resolve) => {
      release = resolve;
    });
    const hits = parkingHits;
    const sources = (await api(page, 'GET', `/v1/knowledge-base/${baseId}/sources`)).json().data as Array<{ id: string; title: string }>;
    const parking = sources.find((s) => s.title === 'Parking')!;
    // Another client refreshes the page source; its fetch is held.
    const refreshed = api(page, 'POST', `/v1/knowledge-base/${baseId}/sources/${parking.id}/refresh`);
    while (parkingHits === hits) await new Promise((resolve) => setTimeout(resolve, 20));
    await page.reload();
    const row = page.getByRole('row').filter({ hasText: 'Parking' });
    await row.getByText('processing', { exact: true }).waitFor();
    await page.getByTestId('source-tally').getByText('4 sources: 2 ready, 1 processing, 1 failed').waitFor();
    holdParking = undefined;
    release();
    assert.equal((await refreshed).statusCode, 200);
    // No reload: the page's polling sees it ready.
    await row.getByText('ready', { exact: true }).waitFor();
    await page.getByTestId('source-tally').getByText('4 sources: 3 ready, 1 failed').waitFor();

    // The page's own "Process again": processing while the fetch is held, then ready.
    holdParking = new Promise<void>((resolve) => {
      release = resolve;
    });
    const before = parkingHits;
    const previous = (await api(page, 'GET', `/v1/knowledge-base/${baseId}/sources/${parking.id}`)).json().updated_at as string;
    await page.getByRole('button', { name: 'Process again: Parking' }).click();
    await row.getByText('processing', { exact: true }).waitFor();
    while (parkingHits === before) await new Promise((resolve) => setTimeout(resolve, 20));
    holdParking = undefined;
    release();
    await row.getByText('ready', { exact: true }).waitFor();
    const updated = (await api(page, 'GET', `/v1/knowledge-base/${baseId}/sources/${parking.id}`)).json();
    assert.equal(updated.status, 'ready');
    assert.ok(updated.updated_at > previous, 'processed again');
  });

  it('runs a test query that finds the phrase of the uploaded file, with its score', async () => {
    await page.getByLabel('Question').fill('How long is the warranty on the blender?');
    await page.getByRole('button', { name: 'Search' }).click();
    const results = page.getByRole('list', { name: 'Retrieved chunks' });
    const first = results.getByRole('listitem').first();
    await first.getByText(/seven-year warranty covering the motor/).waitFor();
    await first.getByText('1. returns-policy.md').waitFor();
    const score = Number(String(await first.getByText(/^Score /).textContent()).replace('Score ', ''));
    assert.ok(score > 0 && score <= 1, `score ${score}`);
    await checkPage(page, 'knowledge-base-query');

    const answer = (await api(page, 'POST', `/v1/knowledge-base/${baseId}/query`, { query: 'How long is the warranty on the blender?', top_k: 5 })).json();
    assert.match(answer.results[0].text, /seven-year warranty/);
    assert.equal(Number(answer.results[0].score.toFixed(2)), score, 'the page shows the platform score');

    await page.getByLabel('Question').fill('xylophone quartz');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('Nothing matches.').waitFor();
  });

  it('deletes a source after asking: gone from the page and the platform', async () => {
    const sources = (await api(page, 'GET', `/v1/knowledge-base/${baseId}/sources`)).json().data as Array<{ id: string; title: string }>;
    const hours = sources.find((s) => s.title === 'Opening hours')!;
    await page.getByRole('button', { name: 'Delete Opening hours' }).click();
    const dialog = page.getByRole('alertdialog', { name: 'Delete “Opening hours”?' });
    await dialog.waitFor();
    await checkPage(page, 'knowledge-base-delete-source');
    await dialog.getByRole('button', { name: 'Delete source' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByRole('row').filter({ hasText: 'Opening hours' }).waitFor({ state: 'detached' });
    await page.getByTestId('source-tally').getByText('3 sources: 2 ready, 1 failed').waitFor();
    assert.equal((await api(page, 'GET', `/v1/knowledge-base/${baseId}/sources/${hours.id}`)).statusCode, 404);
    const answer = (await api(page, 'POST', `/v1/knowledge-base/${baseId}/query`, { query: 'When does the shop open in the morning?' })).json();
    assert.ok(!answer.results.some((r: { source_id: string }) => r.source_id === hours.id), 'its chunks left the search');
  });

  it('deletes the knowledge base after asking', async () => {
    await page.getByRole('button', { name: 'Delete knowledge base' }).click();
    const dialog = page.getByRole('alertdialog', { name: 'Delete “Help centre”?' });
    await dialog.waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    assert.equal((await api(page, 'GET', `/v1/knowledge-base/${baseId}`)).statusCode, 200, 'Escape kept it');
    await page.getByRole('button', { name: 'Delete knowledge base' }).click();
    await dialog.getByRole('button', { name: 'Delete knowledge base' }).click();
    await heading(page, 'Knowledge bases');
    await page.getByText('No knowledge bases yet.').waitFor();
    assert.equal((await api(page, 'GET', `/v1/knowledge-base/${baseId}`)).statusCode, 404);
  });

  it('shows phone numbers loading, failed and empty; searches sandbox numbers, buys one, assigns it to an agent, unassigns and releases it', async () => {
    const agent = (await api(page, 'POST', '/v1/agents', { name: 'Front desk' })).json();
    const balanceBefore = (await api(page, 'GET', '/v1/wallet')).json().balance_usd as number;
    await openThroughStates(page, 'Phone numbers', '/v1/phone-numbers', 'phone-numbers');
    await page.getByText('No phone numbers yet.').waitFor();
    await checkPage(page, 'phone-numbers-empty');

    await page.getByLabel('Area code').fill('55a');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('Up to 5 digits, e.g. 555.').waitFor();
    await page.getByLabel('Area code').fill('555');
    await page.getByLabel('Contains digits').fill('0143');
    await page.getByRole('button', { name: 'Search' }).click();
    const offer = page.getByRole('table', { name: 'Numbers for sale' }).getByRole('row').nth(1);
    await offer.waitFor();
    const number = String(await offer.getByRole('cell').first().textContent());
    assert.match(number, /^\+15550143\d{3}$/);
    await checkPage(page, 'phone-numbers-search');
    await offer.getByRole('button', { name: `Buy ${number}` }).click();
    await page.getByText(`${number} is yours`, { exact: false }).waitFor();
    const owned = page.getByRole('table', { name: 'Your phone numbers' }).getByRole('row').filter({ hasText: number });
    await owned.waitFor();
    const listed = (await api(page, 'GET', '/v1/phone-numbers')).json().data as Array<{ id: string; number: string; agent_id: string | null; provider: string }>;
    assert.equal(listed.length, 1);
    assert.deepEqual({ number: listed[0].number, agent_id: listed[0].agent_id, provider: listed[0].provider }, { number, agent_id: null, provider: 'sandbox' });
    const balanceAfter = (await api(page, 'GET', '/v1/wallet')).json().balance_usd as number;
    assert.ok(Math.abs(balanceBefore - balanceAfter - 1.15) < 1e-9, `the first month was debited (${balanceBefore} → ${balanceAfter})`);

    await page.getByLabel(`Agent for ${number}`).selectOption({ label: 'Front desk' });
    await page.getByRole('button', { name: `Save the agent of ${number}` }).click();
    await page.getByText(`${number} now starts Front desk.`).waitFor();
    assert.equal((await api(page, 'GET', `/v1/phone-numbers/${listed[0].id}`)).json().agent_id, agent.id);
    await checkPage(page, 'phone-numbers-owned');

    await page.reload();
    await heading(page, 'Phone numbers');
    assert.equal(await page.getByLabel(`Agent for ${number}`).inputValue(), agent.id, 'the assignment shows after a reload');
    await page.getByLabel(`Agent for ${number}`).selectOption({ label: 'No agent' });
    await page.getByRole('button', { name: `Save the agent of ${number}` }).click();
    await page.getByText(`${number} has no agent now.`).waitFor();
    assert.equal((await api(page, 'GET', `/v1/phone-numbers/${listed[0].id}`)).json().agent_id, null);

    await page.getByRole('button', { name: `Release ${number}` }).click();
    const dialog = page.getByRole('alertdialog', { name: `Release ${number}?` });
    await dialog.getByRole('button', { name: 'Release number' }).click();
    await page.getByText(`${number} is released.`).waitFor();
    await page.getByText('No phone numbers yet.').waitFor();
    assert.equal((await api(page, 'GET', `/v1/phone-numbers/${listed[0].id}`)).statusCode, 404);
  });

  it('imports a number held at the provider, checking it is E.164 first', async () => {
    await page.getByLabel('Number to import').fill('555 010 7777');
    await page.getByRole('button', { name: 'Import number' }).click();
    await page.getByText(/Start with \+ and the country code/).first().waitFor();
    await page.getByLabel('Number to import').fill('+1 (555) 010-7777');
    await page.getByLabel('Label (optional)').fill('Old line');
    await page.getByRole('button', { name: 'Import number' }).click();
    await page.getByText('+15550107777 is imported.').waitFor();
    await page.getByRole('row').filter({ hasText: '+15550107777' }).getByText('Old line').waitFor();
    const listed = (await api(page, 'GET', '/v1/phone-numbers')).json().data as Array<{ number: string; label: string; monthly_cost_usd: number }>;
    assert.deepEqual(
      listed.map((n) => [n.number, n.label, n.monthly_cost_usd]),
      [['+15550107777', 'Old line', 0]],
    );
  });

  it('shows the do-not-call list loading, failed and empty; adds (by keyboard), imports and removes numbers', async () => {
    const listed = async () => ((await api(page, 'GET', '/v1/dnc')).json().data as Array<{ number: string; reason: string | null }>).map((e) => `${e.number} ${e.reason ?? ''}`.trim()).sort();
    await openThroughStates(page, 'Do not call', '/v1/dnc', 'dnc');
    await page.getByText('No numbers on the list.').waitFor();
    await checkPage(page, 'dnc-empty');

    await page.getByLabel('Number', { exact: true }).fill('555-0100');
    await page.getByRole('button', { name: 'Add to list' }).click();
    await page.locator('.field-error').getByText(/Start with \+ and the country code/).waitFor();
    assert.deepEqual(await listed(), [], 'nothing was sent');
    // By keyboard alone: type, Tab to the reason, Enter submits.
    await page.getByLabel('Number', { exact: true }).fill('');
    await page.getByLabel('Number', { exact: true }).focus();
    await page.keyboard.type('+1 (555) 010-0222');
    await page.keyboard.press('Tab');
    await page.keyboard.type('Asked not to be called');
    await page.keyboard.press('Enter');
    await page.getByText('+15550100222 is on the list.').waitFor();
    await page.getByRole('row').filter({ hasText: '+15550100222' }).getByText('Asked not to be called').waitFor();
    assert.deepEqual(await listed(), ['+15550100222 Asked not to be called']);

    await page.getByLabel('Numbers', { exact: true }).fill('number,reason\n+15550100223,complaint\n+1 555 010 0224\nnot a number\n+15550100222');
    await page.getByText('3 numbers to import, 1 line without a phone number.').waitFor();
    await page.getByRole('button', { name: 'Import numbers' }).click();
    await page.getByText('Import done: 3 numbers on the list, 1 line without a phone number skipped.').waitFor();
    await page.getByText('Line 4 skipped, not a phone number: “not a number”').waitFor();
    assert.deepEqual(await listed(), ['+15550100222 Asked not to be called', '+15550100223 complaint', '+15550100224']);

    await page.getByLabel('CSV or text file').setInputFiles({ name: 'dnc.csv', mimeType: 'text/csv', buffer: Buffer.from('+15550100225,from the file\n') });
    await page.getByText('1 number to import.').waitFor();
    await page.getByRole('button', { name: 'Import numbers' }).click();
    await page.getByText('Import done: 1 number on the list.').waitFor();
    await page.getByRole('row').filter({ hasText: '+15550100225' }).waitFor();
    await checkPage(page, 'dnc-list');

    await page.getByRole('button', { name: 'Remove +15550100222' }).click();
    await page.getByText('+15550100222 is off the list: it may be called again.').waitFor();
    await page.getByRole('row').filter({ hasText: '+15550100222' }).waitFor({ state: 'detached' });
    assert.deepEqual(await listed(), ['+15550100223 complaint', '+15550100224', '+15550100225 from the file']);
  });

  it('logged no error in the page', () => {
    assert.deepEqual(errors, []);
  });
});
