import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTestApp } from '../../../test/support/app.ts';
import { uniqueEmail } from '../../../test/support/fixtures.ts';
import { freePort } from '../../../test/support/ports.ts';
import { sentMails } from '../../../test/support/mail.ts';
import { testDatabase } from '../../../test/support/database.ts';
import { ConfigError, loadConfig } from '../../config.ts';
import { manualClock } from '../../platform/clock.ts';
import { createHousekeepingWorker } from '../housekeeping/worker.ts';

const t = await buildTestApp({ env: { CONTACT_EMAIL: 'team@platform.example' } });
const post = (url: string, payload: unknown, remoteAddress?: string) => t.request({ method: 'POST', url, payload: payload as object, remoteAddress });

describe('contact form', () => {
  it('stores the message and mails a notice to CONTACT_EMAIL (202)', async () => {
    const email = uniqueEmail('visitor');
    const res = await post('/v1/contact', { name: 'Ada\r\nBcc: evil@example.com', email: `  ${email.toUpperCase()} `, message: 'We would like a demo.\nThanks!' });
    assert.equal(res.statusCode, 202, res.body);
    assert.deepEqual(res.json(), { status: 'accepted' });
    const row = await t.platform.db.selectFrom('contact_messages').selectAll().where('email', '=', email).executeTakeFirstOrThrow();
    assert.equal(row.message, 'We would like a demo.\nThanks!');
    const mail = sentMails(t).find((m) => m.meta?.reply_to === email);
    assert.ok(mail, 'a mail notice was written');
    assert.equal(mail.to, 'team@platform.example');
    assert.equal(mail.subject, 'Contact form: Ada Bcc: evil@example.com');
    assert.match(mail.text, /We would like a demo\.\nThanks!/);
    assert.equal(mail.meta?.contact_message_id, String(row.id));
  });

  it('refuses bad and oversized fields with 422 naming the field, a huge body with 413', async () => {
    const cases: Array<[unknown, string]> = [
      [{ name: 'Ada', email: 'not-an-email', message: 'hi' }, 'email'],
      [{ name: 'Ada', email: 'ada@example', message: 'hi' }, 'email'],
      [{ name: '', email: 'ada@example.com', message: 'hi' }, 'name'],
      [{ name: 'Ada', email: 'ada@example.com', message: 'x'.repeat(5001) }, 'message'],
      [{ name: 'Ada', email: 'ada@example.com', message: 42 }, 'message'],
      [{ name: 'Ada', email: 'ada@example.com', message: 'a\u0000b' }, 'message'],
      [{ name: 'Ada', email: 'ada@example.com', message: 'hi', extra: 1 }, 'extra'],
    ];
    for (const [payload, path] of cases) {
      const res = await post('/v1/contact', payload);
      assert.equal(res.statusCode, 422, `${JSON.stringify(payload).slice(0, 80)}: ${res.body}`);
      assert.match(res.headers['content-type'] as string, /^application\/problem\+json/);
      assert.ok(res.json().errors.some((e: { path: string }) => e.path === path), res.body);
    }
    const huge = await post('/v1/contact', { name: 'Ada', email: 'ada@example.com', message: 'x'.repeat(100_000) });
    assert.equal(huge.statusCode, 413);
    assert.equal(huge.json().code, 'payload_too_large');
  });

  it('keeps the message and answers 202 when the mail server is down (the failure is logged)', async (tc) => {
    const lines: string[] = [];
    const down = await buildTestApp({
      t: tc,
      env: { CONTACT_EMAIL: 'team@platform.example', SMTP_URL: `smtp://127.0.0.1:${await freePort()}` },
      logTo: { write: (line: string) => lines.push(line) },
    });
    const email = uniqueEmail('smtp-down');
    const res = await down.request({ method: 'POST', url: '/v1/contact', payload: { name: 'Cy', email, message: 'still here?' } });
    assert.equal(res.statusCode, 202, res.body);
    assert.ok(await down.platform.db.selectFrom('contact_messages').select('id').where('email', '=', email).executeTakeFirst());
    assert.ok(lines.some((line) => line.includes('mail notice failed')), 'the failure is logged');
  });

  it('refuses a CONTACT_EMAIL that is not an address at start-up', () => {
    assert.throws(() => loadConfig({ CONTACT_EMAIL: 'the team' }), (error: ConfigError) => error instanceof ConfigError && error.variable === 'CONTACT_EMAIL');
    assert.equal(loadConfig({ CONTACT_EMAIL: 'team@example.com' }).contactEmail, 'team@example.com');
  });

  it('stores the message without a mail when CONTACT_EMAIL is unset', async (tc) => {
    const bare = await buildTestApp({ t: tc });
    const res = await bare.request({ method: 'POST', url: '/v1/contact', payload: { name: 'Bo', email: 'bo@example.com', message: 'hello' } });
    assert.equal(res.statusCode, 202);
    assert.equal(sentMails(bare).length, 0);
    assert.ok(await bare.platform.db.selectFrom('contact_messages').select('id').where('email', '=', 'bo@example.com').executeTakeFirst());
  });
});

describe('newsletter', () => {
  it('subscribes idempotently (one row), normalises the address, unsubscribes keeping the record, resubscribes', async () => {
    const email = uniqueEmail('reader');
    const [local, domain] = email.split('@') as [string, string];
    const first = await post('/v1/newsletter/subscribe', { email: ` ${local}@${domain.toUpperCase()} ` });
    assert.equal(first.statusCode, 200, first.body);
    assert.deepEqual(first.json(), { email, subscribed: true });
    const second = await post('/v1/newsletter/subscribe', { email });
    assert.equal(second.statusCode, 200);
    const rows = await t.platform.db.selectFrom('newsletter_subscriptions').selectAll().where('email', '=', email).execute();
    assert.equal(rows.length, 1);
    assert.equal(rows[0]?.unsubscribed_at, null);
    const subscribedAt = new Date(rows[0]?.subscribed_at as Date).getTime();

    const off = await post('/v1/newsletter/unsubscribe', { email: email.toUpperCase() });
    assert.equal(off.statusCode, 200);
    assert.deepEqual(off.json(), { email, subscribed: false });
    const kept = await t.platform.db.selectFrom('newsletter_subscriptions').selectAll().where('email', '=', email).executeTakeFirstOrThrow();
    assert.ok(kept.unsubscribed_at, 'the unsubscription is recorded');
    assert.equal(new Date(kept.subscribed_at).getTime(), subscribedAt);
    const offAgain = await post('/v1/newsletter/unsubscribe', { email });
    assert.equal(offAgain.statusCode, 200);
    assert.equal(new Date((await t.platform.db.selectFrom('newsletter_subscriptions').select('unsubscribed_at').where('email', '=', email).executeTakeFirstOrThrow()).unsubscribed_at as Date).getTime(), new Date(kept.unsubscribed_at).getTime());

    const back = await post('/v1/newsletter/subscribe', { email });
    assert.equal(back.statusCode, 200);
    const again = await t.platform.db.selectFrom('newsletter_subscriptions').selectAll().where('email', '=', email).execute();
    assert.equal(again.length, 1);
    assert.equal(again[0]?.unsubscribed_at, null);
  });

  it('unsubscribing an unknown address is fine and stores nothing', async () => {
    const email = uniqueEmail('stranger');
    const res = await post('/v1/newsletter/unsubscribe', { email });
    assert.equal(res.statusCode, 200);
    assert.equal((await t.platform.db.selectFrom('newsletter_subscriptions').select('email').where('email', '=', email).execute()).length, 0);
  });

  it('refuses a malformed address and wrong types with 422', async () => {
    for (const email of ['', 'no at sign', 'a@b', 'two@@example.com', 'sp ace@example.com', `${'x'.repeat(250)}@example.com`]) {
      const res = await post('/v1/newsletter/subscribe', { email });
      assert.equal(res.statusCode, 422, `${email.slice(0, 40)}: ${res.body}`);
      assert.equal(res.json().errors[0].path, 'email');
    }
    assert.equal((await post('/v1/newsletter/unsubscribe', { email: ['a@example.com'] })).statusCode, 422);
    assert.equal((await post('/v1/newsletter/subscribe', {})).statusCode, 422);
  });
});

describe('events', () => {
  it('stores one event (202) with its timestamp, or now', async () => {
    const anonymousId = `anon-${Math.random().toString(36).slice(2)}`;
    const res = await post('/v1/events', { name: 'pricing_viewed', properties: { plan: 'pro', n: 3 }, anonymous_id: anonymousId, timestamp: '2026-11-20T10:00:00.000Z' });
    assert.equal(res.statusCode, 202, res.body);
    assert.deepEqual(res.json(), { accepted: 1 });
    const row = await t.platform.db.selectFrom('public_events').selectAll().where('anonymous_id', '=', anonymousId).executeTakeFirstOrThrow();
    assert.equal(row.name, 'pricing_viewed');
    assert.deepEqual(row.properties, { plan: 'pro', n: 3 });
    assert.equal(new Date(row.occurred_at).toISOString(), '2026-11-20T10:00:00.000Z');
    const bare = await post('/v1/events', { name: 'page_view', anonymous_id: `${anonymousId}-2` });
    assert.equal(bare.statusCode, 202);
    const stored = await t.platform.db.selectFrom('public_events').selectAll().where('anonymous_id', '=', `${anonymousId}-2`).executeTakeFirstOrThrow();
    assert.deepEqual(stored.properties, {});
  });

  it('stores a batch of 100; a batch of 101 is 422 and stores nothing', async () => {
    const anonymousId = `batch-${Math.random().toString(36).slice(2)}`;
    const events = Array.from({ length: 100 }, (_, i) => ({ name: `step_${i}`, anonymous_id: anonymousId }));
    const res = await post('/v1/events', { events });
    assert.equal(res.statusCode, 202, res.body);
    assert.deepEqual(res.json(), { accepted: 100 });
    const count = async (id: string) => (await t.platform.db.selectFrom('public_events').select('id').where('anonymous_id', '=', id).execute()).length;
    assert.equal(await count(anonymousId), 100);

    const over = `over-${anonymousId}`;
    const tooMany = await post('/v1/events', { events: Array.from({ length: 101 }, () => ({ name: 'x', anonymous_id: over })) });
    assert.equal(tooMany.statusCode, 422, tooMany.body);
    assert.deepEqual(tooMany.json().errors, [{ path: 'events', message: 'must NOT have more than 100 items' }], 'only the batch form\'s error');
    assert.equal(await count(over), 0);
    assert.equal((await post('/v1/events', { events: [] })).statusCode, 422);
  });

  it('refuses properties over 8 KB serialised (naming the event), long names and wrong types', async () => {
    const big = { blob: 'x'.repeat(8200) };
    const one = await post('/v1/events', { name: 'big', properties: big });
    assert.equal(one.statusCode, 422, one.body);
    assert.equal(one.json().errors[0].path, 'properties');
    const anonymousId = `big-${Math.random().toString(36).slice(2)}`;
    const batch = await post('/v1/events', { events: [{ name: 'ok', anonymous_id: anonymousId }, { name: 'big', properties: big, anonymous_id: anonymousId }] });
    assert.equal(batch.statusCode, 422);
    assert.equal(batch.json().errors[0].path, 'events.1.properties');
    assert.equal((await t.platform.db.selectFrom('public_events').select('id').where('anonymous_id', '=', anonymousId).execute()).length, 0, 'nothing of a refused batch is stored');
    // A lone surrogate (valid JSON, not valid Unicode) in a value or a key: jsonb could not hold it
    // (refused by the platform's input guard, naming the field).
    for (const raw of ['{"name":"a","properties":{"k":"\\ud800"}}', '{"name":"a","properties":{"\\udfff":1}}', '{"name":"a","properties":{"k":[{"x":"a\\ud800b"}]}}']) {
      const res = await t.request({ method: 'POST', url: '/v1/events', payload: raw, headers: { 'content-type': 'application/json' } });
      assert.equal(res.statusCode, 422, `${raw}: ${res.body}`);
      assert.match(res.json().errors[0].path, /^properties\./);
    }
    // Multi-byte characters count in bytes: 3,000 × 3 bytes is over the limit.
    assert.equal((await post('/v1/events', { name: 'wide', properties: { s: '€'.repeat(3000) } })).statusCode, 422);
    const cases: Array<[unknown, string]> = [
      [{ name: 'x'.repeat(101) }, 'name'],
      [{ name: '' }, 'name'],
      [{ name: 5 }, 'name'],
      [{ name: 'a', properties: [] }, 'properties'],
      [{ name: 'a', timestamp: 'yesterday' }, 'timestamp'],
      [{ name: 'a', extra: true }, 'extra'],
      [{ events: [{ name: 'a' }], name: 'b' }, 'name'],
      [{ events: [{ name: 'a' }, { name: 'b', anonymous_id: 7 }] }, 'events.1.anonymous_id'],
      [['a list'], 'body'],
      [{ name: 'a', timestamp: '0000-01-01T00:00:00Z' }, 'timestamp'],
      [{ name: 'a', timestamp: '9999-12-31T23:59:59.999Z' }, 'timestamp'],
      [{ events: [{ name: 'a' }, { name: 'b', timestamp: '1969-07-20T20:17:00Z' }] }, 'events.1.timestamp'],
    ];
    for (const [payload, path] of cases) {
      const res = await post('/v1/events', payload);
      assert.equal(res.statusCode, 422, `${JSON.stringify(payload)}: ${res.body}`);
      assert.match(res.headers['content-type'] as string, /^application\/problem\+json/);
      assert.deepEqual(res.json().errors.map((e: { path: string }) => e.path), [path], res.body);
    }
  });
});

describe('events retention', () => {
  it('housekeeping deletes events received more than 90 days ago and keeps newer ones', async () => {
    const clock = manualClock(new Date('2031-01-01T00:00:00.000Z'));
    const aged = await buildTestApp({ clock });
    const tag = `retention-${Math.random().toString(36).slice(2)}`;
    await aged.request({ method: 'POST', url: '/v1/events', payload: { name: 'old', anonymous_id: tag } });
    clock.advance(60 * 86_400_000);
    await aged.request({ method: 'POST', url: '/v1/events', payload: { name: 'recent', anonymous_id: tag } });
    clock.advance(31 * 86_400_000);
    // Housekeeping deletes across the whole database: earlier tests' rows of this file go too.
    const worker = createHousekeepingWorker({ database: await testDatabase(), clock, logger: aged.app.log });
    const deleted = await worker.runDueOnce();
    assert.ok(deleted.public_events >= 1);
    const left = await aged.platform.db.selectFrom('public_events').select('name').where('anonymous_id', '=', tag).execute();
    assert.deepEqual(left.map((r) => r.name), ['recent']);
  });
});

describe('public rate limit', () => {
  it('counts the public endpoints together per IP (RATE_LIMIT_IP_PER_MIN) and answers 429 with Retry-After', async (tc) => {
    const limited = await buildTestApp({ t: tc, env: { RATE_LIMIT_IP_PER_MIN: '3' } });
    const send = (url: string, payload: unknown, remoteAddress = '203.0.113.7') => limited.request({ method: 'POST', url, payload: payload as object, remoteAddress });
    assert.equal((await send('/v1/events', { name: 'a' })).statusCode, 202);
    assert.equal((await send('/v1/newsletter/subscribe', { email: 'limit@example.com' })).statusCode, 200);
    const third = await send('/v1/contact', { name: 'A', email: 'limit@example.com', message: 'hi' });
    assert.equal(third.statusCode, 202);
    assert.equal(third.headers['ratelimit-remaining'], '0');
    const fourth = await send('/v1/newsletter/unsubscribe', { email: 'limit@example.com' });
    assert.equal(fourth.statusCode, 429);
    assert.equal(fourth.json().code, 'rate_limited');
    assert.ok(Number(fourth.headers['retry-after']) > 0);
    assert.equal((await send('/v1/events', { name: 'a' }, '203.0.113.8')).statusCode, 202, 'another IP has its own bucket');
  });
});
