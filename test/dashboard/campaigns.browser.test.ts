import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, describe, it } from 'node:test';
import { launchChromium } from '../../src/modules/widgets/browser-helpers.ts';
import { isoOfLocalInput, localInputOf } from '../../web/dashboard/src/pages/schedule-draft.ts';
import { buildTestApp } from '../support/app.ts';
import { uniqueEmail } from '../support/fixtures.ts';
import { freePort } from '../support/ports.ts';
import { checkPage, heading, sessionOf, collectPageErrors } from './browser.ts';

// The campaigns, schedules, voice sessions, widgets and branding pages in Debian's Chromium
// against the real platform on 127.0.0.1 (sandbox calls at SANDBOX_SPEED=max), one page walking
// them in order: every page empty first, then a campaign created with a calling window around
// now (another's settings changed, then canceled and deleted), a CSV uploaded with one bad row shown as rejected, started, paused and resumed (the
// campaign dialer held back until then, so each state is seen), its progress polled to done and
// its results downloaded; a widget edited with the preview following the draft and its embed
// tag copied; a schedule created, changed, run and another canceled; a voice session and a
// media token made and ended; a branding saved and removed. Each effect is checked through the API.

const port = await freePort();
const origin = `http://127.0.0.1:${port}`;
const t = await buildTestApp({ env: { PUBLIC_BASE_URL: origin, SANDBOX_SPEED: 'max' } });
await t.app.listen({ port, host: '127.0.0.1' });
await t.modules.calls.worker.start();
after(() => t.modules.campaigns.dialer.stop());

const email = uniqueEmail('campaigns');
const hhmm = (date: Date) => date.toISOString().slice(11, 16);

describe('campaigns, schedules, voice sessions, widgets and branding in Chromium', async () => {
  const browser = await launchChromium();
  await browser.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  const page = await browser.newPage();
  page.setDefaultTimeout(15_000);
  const errors = collectPageErrors(page);
  const api = async (method: 'GET' | 'POST', url: string, payload?: object) => {
    const { token, workspaceId } = await sessionOf(t, page);
    return t.request({ method, url, token, workspaceId, ...(payload ? { payload } : {}) });
  };
  const nav = async (name: string) => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click();
    await heading(page, name);
  };
  let agentId = '';

  it('signs up, and shows each page empty', async () => {
    await page.goto(`${origin}/signup`);
    await page.getByLabel('Name').fill('Grace');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Create account' }).click();
    await heading(page, 'Agents');
    const agent = await api('POST', '/v1/agents', { name: 'Reminder line', first_message: 'Hello, this is Acme calling about your booking.', max_duration_seconds: 60 });
    assert.equal(agent.statusCode, 201, agent.body);
    agentId = agent.json().id;
    await page.reload(); // the agents page listed none: its cache would too

    for (const [name, empty, shot] of [
      ['Campaigns', 'No campaigns yet.', 'campaigns-empty'],
      ['Schedules', 'No schedules match.', 'schedules-empty'],
      ['Voice sessions', 'No voice sessions yet.', 'voice-sessions-empty'],
      ['Widgets', 'No widgets yet.', 'widgets-empty'],
      ['Branding', 'No branding yet: public pages show the platform\'s own look.', 'branding-empty'],
    ]) {
      await nav(name);
      await page.getByText(empty, { exact: true }).waitFor();
      await checkPage(page, shot);
    }
  });

  it('creates a campaign with every setting, refusing a bad one first', async () => {
    await nav('Campaigns');
    await page.getByRole('link', { name: 'New campaign' }).click();
    await heading(page, 'New campaign');
    await page.getByLabel('Campaign name').fill('Booking reminders');
    await page.getByLabel('Agent').selectOption({ label: 'Reminder line' });
    await page.getByLabel('Default country').fill('US');
    await page.getByLabel('Concurrency').fill('0');
    await page.getByLabel('Attempts per contact').fill('2');
    await page.getByLabel('Minutes between attempts').fill('5');
    await page.getByLabel('Call only at set hours').check();
    await page.getByLabel('Saturday').check();
    await page.getByLabel('Sunday').check();
    // A window open from an hour ago to two hours ahead, in UTC: the calls may go now.
    await page.getByLabel('From (HH:MM)').fill(hhmm(new Date(Date.now() - 3600_000)));
    await page.getByLabel('Until (HH:MM)').fill(hhmm(new Date(Date.now() + 7200_000)));
    await page.getByLabel('Time zone').fill('UTC');
    await page.getByLabel('What each callee says').fill('Yes, I will be there. Goodbye!');
    await page.getByRole('button', { name: 'Create campaign' }).click();
    await page.getByText('A whole number from 1 to 50').waitFor();
    await checkPage(page, 'campaign-new');
    await page.getByLabel('Concurrency').fill('2');
    await page.getByRole('button', { name: 'Create campaign' }).click();
    await heading(page, 'Booking reminders');
    await page.getByText('No contacts yet.').waitFor();
    assert.equal(await page.getByTestId('campaign-status').textContent(), 'draft');

    const id = new URL(page.url()).pathname.split('/').at(-1);
    const saved = (await api('GET', `/v1/campaigns/${id}`)).json();
    assert.equal(saved.agent_id, agentId);
    assert.equal(saved.concurrency, 2);
    assert.equal(saved.max_attempts, 2);
    assert.equal(saved.retry_delay_minutes, 5);
    assert.equal(saved.default_country, 'US');
    assert.deepEqual(saved.calling_window.days, ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']);
    assert.equal(saved.calling_window.timezone, 'UTC');
    assert.deepEqual(saved.simulation, { caller_script: ['Yes, I will be there. Goodbye!'] });
    await checkPage(page, 'campaign-draft');
  });

  it('uploads contacts, showing the bad row rejected with its reason', async () => {
    const csv = 'phone,name\n+15550100201,Ann\nnot-a-number,Bob\n+15550100202,Cid\n';
    await page.getByLabel('Contacts CSV').setInputFiles({ name: 'contacts.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    const rejected = page.getByRole('table', { name: 'Rejected rows' });
    await rejected.getByRole('row').filter({ hasText: 'not a possible phone number: not-a-number' }).getByRole('cell', { name: '3', exact: true }).waitFor();
    await page.getByText(/2 contacts added/).waitFor();
    await page.getByRole('cell', { name: '+15550100202' }).waitFor();
    assert.equal(await page.getByTestId('campaign-status').textContent(), 'ready');
    const id = new URL(page.url()).pathname.split('/').at(-1);
    const contacts = (await api('GET', `/v1/campaigns/${id}/contacts`)).json().data;
    assert.deepEqual(contacts.map((c: { phone: string; variables: { name: string } }) => [c.phone, c.variables.name]), [['+15550100201', 'Ann'], ['+15550100202', 'Cid']]);
    await checkPage(page, 'campaign-uploaded');
  });

  it('starts, pauses and resumes the campaign, then follows it to done and downloads its results', async () => {
    const id = new URL(page.url()).pathname.split('/').at(-1);
    const status = page.getByTestId('campaign-status');
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    await status.getByText('running').waitFor();
    assert.equal((await api('GET', `/v1/campaigns/${id}`)).json().status, 'running');
    await page.getByTestId('progress-text').getByText('0 of 2 contacts done (0%)').waitFor();
    await checkPage(page, 'campaign-running');
    await page.getByRole('button', { name: 'Pause' }).click();
    await status.getByText('paused').waitFor();
    await page.getByText('Paused: nothing more is dialed until you resume.').waitFor();
    assert.equal((await api('GET', `/v1/campaigns/${id}`)).json().status, 'paused');
    await page.getByRole('button', { name: 'Resume' }).click();
    await status.getByText('running').waitFor();
    assert.equal((await api('GET', `/v1/campaigns/${id}`)).json().status, 'running');

    // The dialer, held back so far, now places the calls; the page follows without a reload.
    await t.modules.campaigns.dialer.start();
    await status.getByText('completed').waitFor({ timeout: 60_000 });
    await page.getByTestId('progress-text').getByText('2 of 2 contacts done (100%)').waitFor();
    await page.locator('[data-field="Reached"]').getByText('2', { exact: true }).waitFor();
    // Both contacts reached, each with its call.
    const reached = page.getByRole('table', { name: 'Contacts' }).getByRole('row').filter({ hasText: 'completed' }).filter({ has: page.getByRole('link', { name: 'Open the call' }) });
    await reached.nth(1).waitFor();
    await checkPage(page, 'campaign-completed');

    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download results CSV' }).click();
    const file = await download;
    assert.equal(file.suggestedFilename(), `campaign-${id}-results.csv`);
    const csv = fs.readFileSync(String(await file.path()), 'utf8');
    const fromApi = await api('GET', `/v1/campaigns/${id}/results`);
    assert.equal(csv, fromApi.body, 'the file is the API’s results');
    const [header, ...rows] = csv.trim().split(/\r?\n/);
    assert.equal(header, 'phone,status,attempts,call_id,duration_seconds,end_reason,ended_at,name');
    const contacts = (await api('GET', `/v1/campaigns/${id}/contacts`)).json().data as Array<{ phone: string; call_id: string }>;
    assert.deepEqual(
      rows.map((row) => row.split(',')).map((cells) => [cells[0], cells[1], cells[2], cells[3], cells[7]]),
      contacts.map((c, i) => [c.phone, 'completed', '1', c.call_id, ['Ann', 'Cid'][i]]),
    );
  });

  it('lists the campaigns, and cancels then deletes one', async () => {
    await nav('Campaigns');
    await page.getByRole('row').filter({ hasText: 'Booking reminders' }).filter({ hasText: '2 / 2' }).getByText('completed').waitFor();
    await checkPage(page, 'campaigns-list');
    const created = await api('POST', '/v1/campaigns', { name: 'Spare list', agent_id: agentId });
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().id;
    await page.goto(`${origin}/campaigns/${id}`);
    await heading(page, 'Spare list');
    await page.getByRole('button', { name: 'Change settings' }).click();
    await page.getByLabel('Concurrency').fill('7');
    await page.getByLabel('Call only at set hours').check();
    await page.getByLabel('Time zone').fill('Europe/Paris');
    await checkPage(page, 'campaign-settings');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.locator('[data-field="Concurrency"]').getByText('7', { exact: true }).waitFor();
    const changed = (await api('GET', `/v1/campaigns/${id}`)).json();
    assert.equal(changed.concurrency, 7);
    assert.deepEqual(changed.calling_window, { days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '09:00', end: '17:00', timezone: 'Europe/Paris' });
    await page.getByRole('button', { name: 'Cancel campaign' }).click();
    const dialog = page.getByRole('alertdialog');
    await dialog.getByRole('button', { name: 'Keep it' }).click();
    await dialog.waitFor({ state: 'detached' });
    assert.equal((await api('GET', `/v1/campaigns/${id}`)).json().status, 'draft');
    await page.getByRole('button', { name: 'Cancel campaign' }).click();
    await dialog.getByRole('button', { name: 'Cancel campaign' }).click();
    await page.getByTestId('campaign-status').getByText('canceled').waitFor();
    assert.equal((await api('GET', `/v1/campaigns/${id}`)).json().status, 'canceled');
    await page.getByRole('button', { name: 'Delete campaign' }).click();
    await dialog.getByRole('button', { name: 'Delete campaign' }).click();
    await heading(page, 'Campaigns');
    await page.getByRole('row').filter({ hasText: 'Booking reminders' }).waitFor();
    assert.equal((await api('GET', `/v1/campaigns/${id}`)).statusCode, 404);
  });

  it('edits a widget beside its live preview, and copies its embed tag', async () => {
    await nav('Widgets');
    await page.getByLabel("New widget's name").fill('Website helper');
    await page.getByLabel('Agent').selectOption({ label: 'Reminder line' });
    await page.getByRole('button', { name: 'Create widget' }).click();
    await heading(page, 'Website helper');
    const preview = page.getByTestId('widget-preview');
    // Before any edit the preview greets with the agent's first message.
    await preview.getByText('Hello, this is Acme calling about your booking.').waitFor();

    await page.getByLabel('Title').fill('Ask Acme');
    await page.getByLabel('Greeting').fill('Hi! Ask me about your booking.');
    await page.getByLabel('Mode').selectOption('both');
    await page.getByLabel('Corner').selectOption('bottom-left');
    await page.getByLabel('Colour', { exact: true }).fill('#facc15');
    await page.getByText(/below the 4\.5:1/).waitFor();
    await page.getByLabel('Colour', { exact: true }).fill('#0e7490');
    await page.getByLabel('Allowed origins').fill('https://www.acme.example');
    // The preview follows the draft before anything is saved.
    await page.getByTestId('widget-preview-head').getByText('Ask Acme').waitFor();
    await preview.getByText('Hi! Ask me about your booking.').waitFor();
    await preview.getByText('Start a call').waitFor();
    await preview.getByText('Type a message…').waitFor();
    assert.equal(await page.evaluate(`getComputedStyle(document.querySelector('[data-testid="widget-preview-head"]')).backgroundColor`), 'rgb(14, 116, 144)');
    assert.equal(await page.evaluate(`document.querySelector('[data-testid="widget-preview"]').classList.contains('wp-bottom-left')`), true);
    const launcher = await preview.locator('.wp-launcher').boundingBox();
    const frame = await preview.boundingBox();
    assert.ok(launcher && frame && launcher.x - frame.x < frame.width / 2, 'the launcher sits in the bottom-left corner');

    await page.getByRole('button', { name: 'Save widget' }).click();
    await page.getByText('Saved', { exact: true }).waitFor();
    const id = new URL(page.url()).pathname.split('/').at(-1);
    const saved = (await api('GET', `/v1/widgets/${id}`)).json();
    assert.deepEqual(saved.theme, { title: 'Ask Acme', greeting: 'Hi! Ask me about your booking.', primary_color: '#0e7490', position: 'bottom-left' });
    assert.equal(saved.mode, 'both');
    assert.deepEqual(saved.allowed_origins, ['https://www.acme.example']);

    assert.equal(await page.getByTestId('embed-code').textContent(), saved.embed_code);
    await page.getByRole('button', { name: 'Copy embed tag' }).click();
    await page.getByText('Copied', { exact: true }).waitFor();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), saved.embed_code);
    assert.match(saved.embed_code, new RegExp(`^<script src="${origin}/v1/widgets/${id}/embed.js" async></script>$`));
    await checkPage(page, 'widget-editor');
    await nav('Widgets');
    await page.getByRole('row').filter({ hasText: 'Website helper' }).getByText('https://www.acme.example').waitFor();
  });

  it('schedules a call, changes it, runs it now, and cancels another', async () => {
    await nav('Schedules');
    const schedule = async (to: string) => {
      await page.getByLabel('Agent').selectOption({ label: 'Reminder line' });
      await page.getByLabel('Number to call').fill(to);
      await page.getByLabel('Variables').fill('name=Ada');
      await page.getByLabel('Metadata (JSON, optional)').fill('{"order": "A-17"}');
      await page.getByRole('button', { name: 'Schedule call' }).click();
      await page.getByRole('row').filter({ hasText: to }).waitFor();
    };
    await schedule('+15550100300');
    let list = (await api('GET', '/v1/schedules')).json().data;
    assert.equal(list.length, 1);
    assert.equal(list[0].to, '+15550100300');
    assert.equal(list[0].agent_id, agentId);
    assert.deepEqual(list[0].variables, { name: 'Ada' });
    assert.deepEqual(list[0].metadata, { order: 'A-17' });
    assert.ok(Math.abs(Date.parse(list[0].scheduled_at) - (Date.now() + 3600_000)) < 180_000, `about an hour ahead: ${list[0].scheduled_at}`);

    await page.getByRole('button', { name: /^Edit the call to \+15550100300/ }).click();
    await page.getByRole('heading', { name: 'Change the call to +15550100300' }).waitFor();
    const later = localInputOf(new Date(Date.now() + 2 * 86_400_000));
    await page.getByLabel('Number to call').fill('+15550100301');
    await page.getByLabel('When (your time zone)').fill(later);
    await page.getByRole('button', { name: 'Save schedule' }).click();
    await page.getByRole('row').filter({ hasText: '+15550100301' }).waitFor();
    const changed = (await api('GET', `/v1/schedules/${list[0].id}`)).json();
    assert.equal(changed.to, '+15550100301');
    assert.equal(changed.scheduled_at, isoOfLocalInput(later));
    assert.deepEqual([changed.variables, changed.metadata], [{ name: 'Ada' }, { order: 'A-17' }], 'kept through the edit');
    await checkPage(page, 'schedules');

    await page.getByRole('button', { name: 'Run now: the call to +15550100301' }).click();
    await page.getByRole('row').filter({ hasText: '+15550100301' }).getByText('dispatched').waitFor();
    const ran = (await api('GET', `/v1/schedules/${list[0].id}`)).json();
    assert.equal(ran.status, 'dispatched');
    assert.match(ran.call_id, /^call_/);
    await page.getByRole('row').filter({ hasText: '+15550100301' }).getByRole('link', { name: 'Open the call' }).waitFor();

    // By keyboard alone: the agent picked with the arrow key, Enter in a field submits; the
    // cancel dialog opens on its confirm button, Enter confirms.
    await page.getByLabel('Agent').focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Tab');
    await page.keyboard.type('+15550100302');
    await page.keyboard.press('Enter');
    await page.getByRole('row').filter({ hasText: '+15550100302' }).waitFor();
    await page.getByRole('button', { name: /^Cancel the call to \+15550100302/ }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('alertdialog').waitFor();
    assert.equal(await page.evaluate('document.activeElement?.textContent'), 'Cancel schedule');
    await page.keyboard.press('Enter');
    await page.getByRole('row').filter({ hasText: '+15550100302' }).getByText('canceled').waitFor();
    list = (await api('GET', '/v1/schedules')).json().data;
    assert.equal(list.find((s: { to: string }) => s.to === '+15550100302').status, 'canceled');
  });

  it('creates a voice session with what it takes to connect, ends it, and makes a media token', async () => {
    await nav('Voice sessions');
    await page.getByText(/Transport: built-in media WebSocket/).waitFor();
    await page.getByLabel('Agent').selectOption({ label: 'Reminder line' });
    await page.getByLabel('External user id').fill('user-42');
    await page.getByLabel('Metadata (JSON, optional)').fill('{"plan": ');
    await page.getByText('A JSON object, e.g. {"plan": "pro"}').waitFor();
    await page.getByLabel('Metadata (JSON, optional)').fill('{"plan": "pro"}');
    await page.getByRole('button', { name: 'Create voice session' }).click();
    const token = String(await page.getByTestId('session-token').textContent());
    const address = String(await page.getByTestId('session-url').textContent());
    const sessions = (await api('GET', '/v1/voice/sessions')).json().data;
    assert.equal(sessions.length, 1);
    assert.equal(sessions[0].external_user_id, 'user-42');
    assert.deepEqual(sessions[0].metadata, { plan: 'pro' });
    assert.equal(address, `${sessions[0].url}?token=${encodeURIComponent(token)}`);
    await page.getByRole('button', { name: 'Copy token' }).click();
    await page.getByText('Copied', { exact: true }).waitFor();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), token);
    await page.getByRole('row').filter({ hasText: 'user-42' }).getByText('active').waitFor();
    await checkPage(page, 'voice-session-created');

    await page.getByRole('button', { name: 'End the session of user-42' }).click();
    await page.getByRole('row').filter({ hasText: 'user-42' }).getByText(/^ended/).waitFor();
    const ended = (await api('GET', `/v1/voice/sessions/${sessions[0].id}`)).json();
    assert.equal(ended.status, 'ended');
    assert.equal(ended.end_reason, 'api_end');

    await page.getByRole('button', { name: 'I have what I need' }).click();
    await page.getByLabel('What to create').selectOption('token');
    await page.getByRole('button', { name: 'Get media token' }).click();
    await page.getByTestId('session-token').waitFor();
    assert.equal((await api('GET', '/v1/voice/sessions')).json().data.length, 2);
  });

  it('saves the branding shown in its preview, then removes it', async () => {
    await nav('Branding');
    await page.getByLabel('Domain', { exact: true }).fill('voice.acme.test');
    await page.getByLabel('Brand name').fill('Acme Voice');
    await page.getByLabel('Accent colour').fill('#7c2d12');
    await page.getByLabel('Primary colour').fill('#0e7490');
    await page.getByLabel('Support email').fill('help@acme.test');
    await page.getByLabel('Hide “Powered by Voice Agent Platform”').check();
    const head = page.getByTestId('branding-preview-head');
    await head.getByText('Acme Voice').waitFor();
    assert.equal(await page.evaluate(`getComputedStyle(document.querySelector('[data-testid="branding-preview-head"]')).backgroundColor`), 'rgb(124, 45, 18)');
    assert.equal(await page.getByTestId('powered-by').count(), 0);
    await page.getByTestId('branding-preview').getByText('help@acme.test').waitFor();
    await page.getByRole('button', { name: 'Save branding' }).click();
    await page.getByText('Saved', { exact: true }).waitFor();
    const saved = (await api('GET', '/v1/branding')).json();
    assert.equal(saved.domain, 'voice.acme.test');
    assert.equal(saved.name, 'Acme Voice');
    assert.equal(saved.accent_color, '#7c2d12');
    assert.equal(saved.primary_color, '#0e7490');
    assert.equal(saved.support_email, 'help@acme.test');
    assert.equal(saved.hide_powered_by, true);
    assert.equal((await t.request({ method: 'GET', url: '/v1/branding/voice.acme.test' })).json().name, 'Acme Voice');
    await checkPage(page, 'branding');

    await page.getByRole('button', { name: 'Remove branding' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Remove branding' }).click();
    await page.getByText('Branding removed').waitFor();
    assert.equal((await api('GET', '/v1/branding')).statusCode, 404);
  });

  it('logged no error in the page', () => {
    assert.deepEqual(errors, []);
  });
});
