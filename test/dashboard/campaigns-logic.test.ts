import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Campaign, Schedule, Widget } from '../../sdks/typescript/src/index.ts';
import { brandingDraftField, brandingDraftOf, brandingPutOf } from '../../web/dashboard/src/pages/branding-draft.ts';
import { campaignCreateOf, campaignDraftField, campaignDraftOf, campaignUpdateOf, describeWindow, newCampaignDraft } from '../../web/dashboard/src/pages/campaign-draft.ts';
import { actionsFor, isLive, pauseReason, progressOf, versionOf } from '../../web/dashboard/src/pages/campaign-progress.ts';
import { isoOfLocalInput, localInputOf, scheduleCreateOf, scheduleDraftField, scheduleDraftOf, scheduleUpdateOf } from '../../web/dashboard/src/pages/schedule-draft.ts';
import { scriptText, simulationOf } from '../../web/dashboard/src/pages/simulation-script.ts';
import { connectSnippet, expiresIn, mediaSocketUrl } from '../../web/dashboard/src/pages/voice-connect.ts';
import { greetingShown, widgetDraftField, widgetDraftOf, widgetUpdateOf } from '../../web/dashboard/src/pages/widget-draft.ts';
import { contrastRatio, whiteTextWarning } from '../../web/dashboard/src/ui/color.ts';
import { keyValuesOf, keyValuesText, linesOf, metadataOf, wholeNumber } from '../../web/dashboard/src/ui/text-lists.ts';

// The pure logic behind the campaigns, schedules, voice sessions, widgets and branding pages.

const stats = (fields: Partial<Campaign['stats']> = {}): Campaign['stats'] => ({ total: 0, pending: 0, in_progress: 0, completed: 0, failed: 0, skipped: 0, canceled: 0, ...fields });

describe('text lists', () => {
  it('reads lines, name=value pairs and whole numbers in range', () => {
    assert.deepEqual(linesOf(' Hi \n\n  Bye\n'), ['Hi', 'Bye']);
    assert.deepEqual(keyValuesOf('name = Ada\n\nplan=pro=max\n=oops\nnovalue'), { values: { name: 'Ada', plan: 'pro=max' }, badLines: [4, 5] });
    assert.equal(keyValuesText({ a: '1', b: 'x y' }), 'a=1\nb=x y');
    assert.equal(wholeNumber(' 7 ', 1, 10), 7);
    assert.equal(wholeNumber('0', 1, 10), undefined);
    assert.equal(wholeNumber('11', 1, 10), undefined);
    assert.equal(wholeNumber('2.5', 1, 10), undefined);
  });
});

describe('the new-campaign draft', () => {
  it('turns the inputs into the create body, the window only when asked for', () => {
    const draft = { ...newCampaignDraft('Europe/Paris'), name: ' Reminders ', agent_id: 'agent_1', concurrency: '5', max_attempts: '3', retry_delay_minutes: '0', default_country: 'us', caller_script: 'Hello\n\nGoodbye' };
    const { body, errors } = campaignCreateOf(draft);
    assert.deepEqual(errors, {});
    assert.deepEqual(body, {
      name: 'Reminders',
      agent_id: 'agent_1',
      from_number: null,
      concurrency: 5,
      max_attempts: 3,
      retry_delay_minutes: 0,
      calling_window: null,
      default_country: 'US',
      simulation: { caller_script: ['Hello', 'Goodbye'] },
    });
    const windowed = campaignCreateOf({ ...draft, from_number: '+15550100100', window_enabled: true, window_days: ['fri', 'mon'], window_start: '22:00', window_end: '06:00', caller_script: '' });
    assert.deepEqual(windowed.body.calling_window, { days: ['mon', 'fri'], start: '22:00', end: '06:00', timezone: 'Europe/Paris' });
    assert.equal(windowed.body.from_number, '+15550100100');
    assert.equal(windowed.body.simulation, null);
  });

  it('names every field to fix', () => {
    const { errors } = campaignCreateOf({ ...newCampaignDraft(), concurrency: '51', max_attempts: '0', retry_delay_minutes: '-1', default_country: 'USA', window_enabled: true, window_days: [], window_start: '9am', window_end: '24:00', window_timezone: ' ' });
    assert.deepEqual(Object.keys(errors).sort(), ['agent_id', 'concurrency', 'default_country', 'max_attempts', 'name', 'retry_delay_minutes', 'window_days', 'window_end', 'window_start', 'window_timezone']);
  });

  it('changes a campaign: its settings in the form and back, the hidden simulated latencies kept', () => {
    const campaign: Campaign = {
      id: 'cmp_1',
      name: 'Reminders',
      agent_id: 'agent_1',
      from_number: null,
      status: 'ready',
      pause_reason: null,
      concurrency: 3,
      max_attempts: 2,
      retry_delay_minutes: 0,
      calling_window: { days: ['sat'], start: '10:00', end: '12:00', timezone: 'Asia/Tokyo' },
      default_country: null,
      simulation: { caller_script: ['Hi', { text: 'Stop', interrupt_after_ms: 100 }], latency: { stt_ms: 50 } },
      stats: stats({ total: 1, pending: 1 }),
      started_at: null,
      completed_at: null,
      created_at: '2030-01-01T00:00:00.000Z',
      updated_at: '2030-01-01T00:00:00.000Z',
    };
    const draft = campaignDraftOf(campaign);
    assert.deepEqual(draft, { ...newCampaignDraft('Asia/Tokyo'), name: 'Reminders', agent_id: 'agent_1', concurrency: '3', max_attempts: '2', retry_delay_minutes: '0', window_enabled: true, window_days: ['sat'], window_start: '10:00', window_end: '12:00', caller_script: 'Hi\nStop' });
    const { body, errors } = campaignUpdateOf({ ...draft, concurrency: '4', caller_script: '' }, campaign);
    assert.deepEqual(errors, {});
    assert.equal(body.concurrency, 4);
    assert.deepEqual(body.simulation, { latency: { stt_ms: 50 } });
    assert.deepEqual(campaignUpdateOf(draft, { ...campaign, simulation: null }).body.simulation, { caller_script: ['Hi', 'Stop'] });
    assert.equal(campaignUpdateOf({ ...draft, caller_script: '' }, { ...campaign, simulation: null }).body.simulation, null);
    assert.equal(campaignDraftOf({ ...campaign, calling_window: null }).window_enabled, false);
    assert.deepEqual(campaignUpdateOf(draft, campaign).body.simulation, campaign.simulation);
  });

  it('maps the API field paths onto the form, and says the window in words', () => {
    assert.equal(campaignDraftField('calling_window.start'), 'window_start');
    assert.equal(campaignDraftField('calling_window.days.2'), 'window_days');
    assert.equal(campaignDraftField('calling_window'), 'window_enabled');
    assert.equal(campaignDraftField('simulation.caller_script.0'), 'caller_script');
    assert.equal(campaignDraftField('concurrency'), 'concurrency');
    assert.equal(campaignDraftField('nonsense'), undefined);
    assert.equal(describeWindow(null), 'Any time');
    assert.equal(describeWindow({ days: ['mon', 'tue'], start: '09:00', end: '17:00', timezone: 'UTC' }), 'Mon, Tue 09:00–17:00 (UTC)');
  });
});

describe('campaign progress and actions', () => {
  it('counts every contact with nothing left to do as done', () => {
    assert.deepEqual(progressOf(stats()), { done: 0, total: 0, percent: 0 });
    assert.deepEqual(progressOf(stats({ total: 3, completed: 1, failed: 1, in_progress: 1 })), { done: 2, total: 3, percent: 66 });
    assert.deepEqual(progressOf(stats({ total: 4, completed: 2, skipped: 1, canceled: 1 })), { done: 4, total: 4, percent: 100 });
  });

  it('offers what each status allows', () => {
    assert.deepEqual(actionsFor('draft'), { upload: true, start: undefined, pause: false, cancel: true, remove: true });
    assert.deepEqual(actionsFor('ready'), { upload: true, start: 'Start', pause: false, cancel: true, remove: true });
    assert.deepEqual(actionsFor('running'), { upload: false, start: undefined, pause: true, cancel: true, remove: false });
    assert.deepEqual(actionsFor('paused'), { upload: false, start: 'Resume', pause: false, cancel: true, remove: true });
    assert.deepEqual(actionsFor('completed'), { upload: false, start: undefined, pause: false, cancel: false, remove: true });
    assert.equal(actionsFor('canceled').cancel, false);
  });

  it('polls while calls are placed or still finishing after a pause', () => {
    assert.equal(isLive({ status: 'running', stats: stats() }), true);
    assert.equal(isLive({ status: 'paused', stats: stats({ in_progress: 1 }) }), true);
    assert.equal(isLive({ status: 'paused', stats: stats() }), false);
    assert.equal(isLive({ status: 'completed', stats: stats() }), false);
    assert.match(pauseReason('insufficient_balance'), /wallet/);
    assert.match(pauseReason(null), /resume/);
  });

  it('versions a campaign by its status and counts', () => {
    const base = { status: 'running' as const, stats: stats({ total: 2, pending: 2 }) };
    assert.equal(versionOf(base), versionOf({ ...base, stats: { ...base.stats } }));
    assert.notEqual(versionOf(base), versionOf({ ...base, stats: stats({ total: 2, pending: 1, in_progress: 1 }) }));
    assert.notEqual(versionOf(base), versionOf({ ...base, status: 'paused' }));
  });
});

describe('the schedule draft', () => {
  const schedule: Schedule = {
    id: 'sch_1',
    agent_id: 'agent_1',
    to: '+15550100200',
    from: null,
    scheduled_at: '2030-05-06T07:08:00.000Z',
    variables: { name: 'Ada' },
    metadata: {},
    simulation: { caller_script: ['Hi', { text: 'Wait', interrupt_after_ms: 300 }] },
    status: 'scheduled',
    call_id: null,
    late: false,
    dispatched_at: null,
    canceled_at: null,
    error: null,
    created_at: '2030-05-01T00:00:00.000Z',
    updated_at: '2030-05-01T00:00:00.000Z',
  };

  it('holds the time as a datetime-local input does, in this machine’s zone', () => {
    const when = new Date(2030, 4, 6, 9, 5);
    assert.equal(localInputOf(when), '2030-05-06T09:05');
    assert.equal(isoOfLocalInput('2030-05-06T09:05'), when.toISOString());
    assert.equal(isoOfLocalInput(''), undefined);
    assert.equal(isoOfLocalInput('tomorrow'), undefined);
  });

  it('edits a schedule and writes the whole PATCH body back', () => {
    const draft = scheduleDraftOf(schedule);
    assert.deepEqual({ ...draft, when: '' }, { agent_id: 'agent_1', to: '+15550100200', from: '', when: '', variables: 'name=Ada', metadata: '', caller_script: 'Hi\nWait' });
    assert.equal(scheduleDraftOf({ ...schedule, metadata: { order: 'A-17' } }).metadata, '{"order":"A-17"}');
    assert.equal(isoOfLocalInput(draft.when), schedule.scheduled_at);
    const { body, errors } = scheduleUpdateOf({ ...draft, caller_script: '' }, schedule);
    assert.deepEqual(errors, {});
    assert.deepEqual(body, { agent_id: 'agent_1', to: '+15550100200', from: null, scheduled_at: schedule.scheduled_at, variables: { name: 'Ada' }, metadata: {}, simulation: null });
  });

  it('creates with only what was given, and names the fields to fix', () => {
    const created = scheduleCreateOf({ agent_id: 'agent_1', to: ' +15550100200 ', from: '', when: '2030-05-06T09:05', variables: '', metadata: '{"order": "A-17"}', caller_script: 'Hello' });
    assert.deepEqual(created.errors, {});
    assert.deepEqual(created.body, { agent_id: 'agent_1', to: '+15550100200', scheduled_at: new Date(2030, 4, 6, 9, 5).toISOString(), variables: {}, metadata: { order: 'A-17' }, simulation: { caller_script: ['Hello'] } });
    const bad = scheduleCreateOf({ agent_id: '', to: '', from: '', when: '', variables: 'oops', metadata: '[1]', caller_script: '' });
    assert.deepEqual(Object.keys(bad.errors).sort(), ['agent_id', 'metadata', 'to', 'variables', 'when']);
    assert.equal(scheduleDraftField('scheduled_at'), 'when');
    assert.equal(scheduleDraftField('variables.name'), 'variables');
    assert.equal(scheduleDraftField('simulation.caller_script.0'), 'caller_script');
    assert.equal(scheduleDraftField('metadata.order'), 'metadata');
    assert.equal(scheduleDraftField('late'), undefined);
  });
});

describe('the sandbox simulation in a form', () => {
  it('edits the lines as text, keeping a barge-in while its text is unchanged and the latencies', () => {
    const original = { caller_script: ['Hi', { text: 'Stop', interrupt_after_ms: 100 }], latency: { llm_first_token_ms: 300 } };
    assert.equal(scriptText(original), 'Hi\nStop');
    assert.equal(scriptText(null), '');
    assert.deepEqual(simulationOf(['Hi', 'Stop'], original), original);
    assert.deepEqual(simulationOf(['Hello', 'Stop', 'Bye'], original), { caller_script: ['Hello', { text: 'Stop', interrupt_after_ms: 100 }, 'Bye'], latency: { llm_first_token_ms: 300 } });
    assert.deepEqual(simulationOf(['Stop'], original), { caller_script: ['Stop'], latency: { llm_first_token_ms: 300 } });
    assert.deepEqual(simulationOf([], original), { latency: { llm_first_token_ms: 300 } });
    assert.equal(simulationOf([], null), null);
    assert.deepEqual(simulationOf(['Hi'], undefined), { caller_script: ['Hi'] });
  });
});

describe('the widget draft', () => {
  const widget: Widget = {
    id: 'wdg_1',
    agent_id: 'agent_1',
    name: 'Site',
    mode: 'chat',
    theme: { title: 'Ask us', greeting: null, primary_color: '#4f46e5', position: 'bottom-right' },
    allowed_origins: ['https://a.example'],
    embed_url: 'https://p.example/v1/widgets/wdg_1/embed.js',
    embed_code: '<script src="https://p.example/v1/widgets/wdg_1/embed.js" async></script>',
    created_at: '2030-01-01T00:00:00.000Z',
    updated_at: '2030-01-01T00:00:00.000Z',
  };

  it('round-trips every field, an empty greeting as null', () => {
    const draft = widgetDraftOf(widget);
    const { body, errors } = widgetUpdateOf({ ...draft, mode: 'both', position: 'bottom-left', allowed_origins: 'https://a.example\n\nhttp://localhost:3000' });
    assert.deepEqual(errors, {});
    assert.deepEqual(body, {
      name: 'Site',
      agent_id: 'agent_1',
      mode: 'both',
      theme: { title: 'Ask us', greeting: null, primary_color: '#4f46e5', position: 'bottom-left' },
      allowed_origins: ['https://a.example', 'http://localhost:3000'],
    });
  });

  it('names the fields to fix', () => {
    const { errors } = widgetUpdateOf({ ...widgetDraftOf(widget), name: ' ', title: '', primary_color: 'blue', allowed_origins: 'https://a.example/path' });
    assert.deepEqual(Object.keys(errors).sort(), ['allowed_origins', 'name', 'primary_color', 'title']);
    assert.equal(widgetDraftField('theme.primary_color'), 'primary_color');
    assert.equal(widgetDraftField('allowed_origins.1'), 'allowed_origins');
    assert.equal(widgetDraftField('theme'), undefined);
  });

  it('greets as the platform does', () => {
    const draft = widgetDraftOf(widget);
    assert.equal(greetingShown({ ...draft, greeting: ' Hey ' }, { name: 'Ada', first_message: 'Hello' }), 'Hey');
    assert.equal(greetingShown(draft, { name: 'Ada', first_message: 'Hello there' }), 'Hello there');
    assert.equal(greetingShown(draft, { name: 'Ada', first_message: 'Hi {{name}}' }), 'Hello, this is Ada. How can I help you today?');
  });
});

describe('colour contrast', () => {
  it('computes WCAG ratios and warns below AA', () => {
    assert.equal(contrastRatio('#000000', '#ffffff').toFixed(1), '21.0');
    assert.equal(contrastRatio('#ffffff', '#ffffff'), 1);
    assert.equal(contrastRatio('#4f46e5', '#ffffff').toFixed(2), '6.29');
    assert.equal(whiteTextWarning('#0e7490'), undefined);
    assert.match(String(whiteTextWarning('#facc15')), /below the 4\.5:1/);
    assert.equal(whiteTextWarning('not a colour'), undefined);
  });
});

describe('the branding draft', () => {
  it('writes the whole branding, empty links as null', () => {
    const draft = { ...brandingDraftOf(null), domain: ' Voice.Example.com ', name: 'Example', support_email: 'help@example.com' };
    const { body, errors } = brandingPutOf(draft);
    assert.deepEqual(errors, {});
    assert.deepEqual(body, {
      domain: 'voice.example.com',
      name: 'Example',
      logo_url: null,
      favicon_url: null,
      primary_color: '#4f46e5',
      accent_color: '#0f172a',
      support_email: 'help@example.com',
      support_url: null,
      hide_powered_by: false,
    });
    const bad = brandingPutOf({ ...draft, domain: 'https://x.com', name: '', logo_url: 'ftp://x', accent_color: '#fff', support_email: 'nobody' });
    assert.deepEqual(Object.keys(bad.errors).sort(), ['accent_color', 'domain', 'logo_url', 'name', 'support_email']);
    assert.equal(brandingDraftField('support_url'), 'support_url');
    assert.equal(brandingDraftField('created_at'), undefined);
  });
});

describe('connecting to a voice session', () => {
  const session = { url: 'ws://127.0.0.1:3000/v1/media/stream', token: 'mt_a+b', transport: 'builtin' as const, room_name: 'room_1' };

  it('gives the socket address with its token, and code to use it', () => {
    assert.equal(mediaSocketUrl(session), 'ws://127.0.0.1:3000/v1/media/stream?token=mt_a%2Bb');
    assert.equal(mediaSocketUrl({ ...session, url: 'wss://x/s?v=1' }), 'wss://x/s?v=1&token=mt_a%2Bb');
    assert.ok(connectSnippet(session).includes('new WebSocket("ws://127.0.0.1:3000/v1/media/stream?token=mt_a%2Bb")'));
    const livekit = connectSnippet({ ...session, transport: 'livekit', url: 'wss://lk.example' });
    assert.ok(livekit.includes('room.connect("wss://lk.example", "mt_a+b")'));
    assert.ok(livekit.includes('room_1'));
  });

  it('reads metadata as a JSON object, and tells the time left', () => {
    assert.deepEqual(metadataOf(' '), {});
    assert.deepEqual(metadataOf('{"plan":"pro"}'), { metadata: { plan: 'pro' } });
    assert.ok(metadataOf('[1]').error);
    assert.ok(metadataOf('{oops').error);
    const now = new Date('2030-01-01T00:00:00Z');
    assert.equal(expiresIn('2030-01-01T00:15:00Z', now), 'in 15 min');
    assert.equal(expiresIn('2029-12-31T23:59:00Z', now), 'expired');
  });
});
