// The real catalog templates (AGENT_TEMPLATES, as GET /v1/agent-templates serves them) run through
// the HTTP API: an agent is created from each template body, then a scripted conversation goes
// through POST /v1/agents/{id}/chat with the default built-in engine. Every reply and action is
// checked, and the template's own extraction fields are read from the stored transcript.
// Only what a user must change is changed: function URLs point at a local server instead of
// example.com, and the support template gets a knowledge base.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { buildTestApp } from '../../../test/support/app.ts';
import { signUp, type TestUser } from '../../../test/support/fixtures.ts';
import { manualClock } from '../../platform/clock.ts';
import { createBuiltinLlm } from '../../providers/llm/builtin.ts';
import { AGENT_TEMPLATES } from './templates.ts';

/** "Now" for the scripts: Monday 2026-11-23, so "next Friday" is 2026-11-27. */
const NOW = new Date('2026-11-23T10:00:00.000Z');

interface Step {
  user: string;
  agent: string;
  /** Actions as the API returns them; function results are checked on status and body only. */
  actions: Array<Record<string, unknown>>;
  ended?: boolean;
}

interface Script {
  variables: Record<string, string>;
  greeting: string;
  steps: Step[];
  extracted: Record<string, unknown>;
}

const transfer = (to: string) => ({ type: 'transfer_call', to, reason: 'caller asked for a human' });
const goodbye = { type: 'end_call', reason: 'caller_goodbye' };
const NOTED = 'Is there anything else I can help you with?';

const SCRIPTS: Record<string, Script> = {
  receptionist: {
    variables: { company_name: 'Bright Smile Dental' },
    greeting: 'Thank you for calling Bright Smile Dental. How can I help you today?',
    steps: [
      {
        user: 'What time do you open on Saturday?',
        agent: "I'm sorry, I don't have that information. I can connect you with a member of our team if you like.",
        actions: [],
      },
      // Reads as agreement ("I would like ...") but is a request of its own: no transfer.
      { user: 'I would like to leave a message for Dr. Chen', agent: 'Thank you. May I have your name, please?', actions: [] },
      { user: 'Tom Baker', agent: 'Thank you. What is the best number to call you back on?', actions: [] },
      { user: 'It is 415 555 0132', agent: 'Thank you. What is the message you would like to leave?', actions: [] },
      { user: 'Please ask him to call me about my crown', agent: 'Thank you. Is it urgent?', actions: [] },
      { user: 'Yes, it is urgent', agent: `Thanks, I've noted that: Yes, it is urgent. ${NOTED}`, actions: [] },
      {
        user: 'Actually, can I speak to a real person please?',
        agent: "Of course. I'm transferring you to a member of our team now, please hold.",
        actions: [transfer('+15550100200')],
        ended: true,
      },
    ],
    extracted: { caller_name: 'Tom Baker', callback_number: '+14155550132', reason: 'Please ask him to call me about my crown', urgent: true },
  },
  'appointment-booking': {
    variables: { business_name: 'Glow Spa' },
    greeting: 'Hi, you have reached Glow Spa bookings. Would you like to book an appointment?',
    steps: [
      {
        user: 'Can you check availability for a massage next Friday?',
        agent: 'Friday has openings at 10 am and 3 pm.',
        actions: [{ type: 'function_call', name: 'check_availability', arguments: { date: '2026-11-27' }, status: 200 }],
      },
      { user: 'Please book an appointment for a massage next Friday at 3 pm', agent: 'To do that, I need the name. What is your name?', actions: [] },
      {
        user: 'Ana Ruiz',
        agent: 'You are booked for Friday 2026-11-27 at 15:00, Ana Ruiz.',
        actions: [{ type: 'function_call', name: 'book_appointment', arguments: { date: '2026-11-27', time: '15:00', name: 'Ana Ruiz' }, status: 201 }],
      },
      { user: 'Great, see you then', agent: 'Thank you for your time. Have a great day, goodbye!', actions: [goodbye], ended: true },
    ],
    extracted: { customer_name: 'Ana Ruiz', phone: null, appointment_date: '2026-11-27', booked: true },
  },
  'lead-qualification': {
    variables: { company_name: 'Acme', lead_name: 'Dana', product: 'Acme CRM' },
    greeting: 'Hi Dana, this is Ben from Acme. You asked about Acme CRM; do you have two minutes?',
    steps: [
      { user: 'Sure, go ahead', agent: 'Thank you. What would you like Acme CRM to help you with?', actions: [] },
      { user: 'We need to track our sales pipeline', agent: 'Thank you. What budget do you have in mind, in US dollars?', actions: [] },
      { user: 'About 5000 dollars', agent: 'Thank you. When do you plan to buy: now, this quarter, this year or later?', actions: [] },
      { user: 'This quarter', agent: 'Thank you. What email address should we send more information to?', actions: [] },
      { user: 'dana@example.org', agent: `Thanks, I've noted that: dana@example.org. ${NOTED}`, actions: [] },
      {
        user: 'I want to talk to a sales representative now',
        agent: "Of course. I'm transferring you to a member of our team now, please hold.",
        actions: [transfer('+15550100201')],
        ended: true,
      },
    ],
    extracted: { interested: null, budget: 5000, timeline: 'this_quarter', email: 'dana@example.org' },
  },
  'customer-support': {
    variables: { company_name: 'Acme' },
    greeting: 'Hello, you are through to Acme support. What can I help you with?',
    steps: [
      {
        user: 'How do I reset my password?',
        agent: 'To reset your password, open Settings and choose Reset password.',
        actions: [{ type: 'search_knowledge_base', query: 'How do I reset my password?', results: 1 }],
      },
      {
        user: 'What is your refund policy?',
        agent: 'Refunds: you can ask for a full refund within 30 days of purchase. Refunds reach your card in 5 to 10 business days.',
        actions: [{ type: 'search_knowledge_base', query: 'What is your refund policy?', results: 1 }],
      },
      { user: 'Thanks, that solved it', agent: 'Thank you for your time. Have a great day, goodbye!', actions: [goodbye], ended: true },
    ],
    // The last topic wins: a refund question is billing.
    extracted: { issue: 'How do I reset my password?', resolved: null, category: 'billing' },
  },
  'outbound-survey': {
    variables: { company_name: 'Glow Spa', first_name: 'Sam' },
    greeting: 'Hello Sam, this is Glow Spa. Could you answer three quick questions about your recent visit?',
    steps: [
      { user: 'Yes, sure', agent: 'Thank you. On a scale from 1 to 10, how satisfied were you with your visit?', actions: [] },
      { user: 'I would say 8', agent: 'Thank you. Would you recommend us to a friend?', actions: [] },
      { user: 'Yes, I would', agent: 'Thank you. What could we improve?', actions: [] },
      { user: 'Shorter waiting times', agent: `Thanks, I've noted that: Shorter waiting times. ${NOTED}`, actions: [] },
      { user: 'No, that is all. Bye', agent: 'Thank you for your time. Have a great day, goodbye!', actions: [goodbye], ended: true },
    ],
    extracted: { satisfaction: 8, would_recommend: true, improvement: 'Shorter waiting times' },
  },
};

const SUPPORT_FAQ = [
  'To reset your password, open Settings and choose Reset password. We email you a link that works for one hour.',
  'Refunds: you can ask for a full refund within 30 days of purchase. Refunds reach your card in 5 to 10 business days.',
  'Our support line is open Monday to Friday, 9 am to 5 pm.',
].join('\n\n');

describe('agent templates: a scripted conversation per real template through POST /v1/agents/{id}/chat', async () => {
  const t = await buildTestApp();
  const calls: Array<{ path: string; body: Record<string, unknown> }> = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => {
      raw += c;
    });
    req.on('end', () => {
      const body = JSON.parse(raw || '{}') as { arguments: Record<string, string> };
      calls.push({ path: req.url ?? '', body });
      const a = body.arguments;
      if (req.url === '/api/availability') return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'Friday has openings at 10 am and 3 pm.' }));
      res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ message: `You are booked for Friday ${a.date} at ${a.time}, ${a.name}.` }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const local = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const llm = createBuiltinLlm({ clock: manualClock(NOW) });

  it('has a script for every template and a template for every script', () => {
    assert.deepEqual(AGENT_TEMPLATES.map((x) => x.id).sort(), Object.keys(SCRIPTS).sort());
  });

  async function agentFrom(user: TestUser, templateId: string) {
    const listed = await t.request({ method: 'GET', url: '/v1/agent-templates', token: user.accessToken });
    const template = listed.json().data.find((x: { id: string }) => x.id === templateId);
    const body = structuredClone(template.agent) as Record<string, unknown> & { functions?: Array<{ url: string }> };
    for (const fn of body.functions ?? []) fn.url = fn.url.replace('https://example.com', local);
    if (templateId === 'customer-support') {
      const kb = await t.request({ method: 'POST', url: '/v1/knowledge-base', token: user.accessToken, payload: { name: 'Help center' } });
      const source = await t.request({ method: 'POST', url: `/v1/knowledge-base/${kb.json().id}/sources`, token: user.accessToken, payload: { type: 'text', title: 'FAQ', text: SUPPORT_FAQ } });
      assert.equal(source.statusCode, 201, source.body);
      body.knowledge_base_ids = [kb.json().id];
    }
    const created = await t.request({ method: 'POST', url: '/v1/agents', token: user.accessToken, payload: body });
    assert.equal(created.statusCode, 201, created.body);
    return created.json();
  }

  for (const template of AGENT_TEMPLATES) {
    it(`${template.id}: greets, answers and acts as scripted, and its extraction fields are filled`, async (tc) => {
      const script = SCRIPTS[template.id];
      assert.ok(script, `no script for template ${template.id}`);
      // The scripts resolve relative dates against NOW; the app's own clock is the wall clock.
      tc.mock.timers.enable({ apis: ['Date'], now: NOW });
      const user = await signUp(t);
      const agent = await agentFrom(user, template.id);
      calls.length = 0;
      let conversationId: string | undefined;
      for (const [i, step] of script.steps.entries()) {
        const res = await t.request({
          method: 'POST',
          url: `/v1/agents/${agent.id}/chat`,
          token: user.accessToken,
          payload: conversationId ? { message: step.user, conversation_id: conversationId } : { message: step.user, variables: script.variables },
        });
        assert.equal(res.statusCode, 200, `step ${i + 1}: ${res.body}`);
        const reply = res.json();
        conversationId = reply.conversation_id;
        const actions = reply.actions.map((a: Record<string, unknown>) => {
          if (a.type !== 'function_call') return a;
          const { result, ...rest } = a as { result: { status: number } };
          return { ...rest, status: result.status };
        });
        assert.deepEqual({ reply: reply.reply, actions, ended: reply.ended }, { reply: step.agent, actions: step.actions, ended: step.ended ?? false }, `step ${i + 1}: "${step.user}"`);
      }
      // The functions really ran, signed, with the arguments the actions report.
      const called = script.steps.flatMap((s) => s.actions).filter((a) => a.type === 'function_call');
      assert.deepEqual(calls.map((c) => [c.body.function, c.body.arguments]), called.map((a) => [a.name, a.arguments]));

      const row = await t.platform.db.selectFrom('agent_conversations').selectAll().where('id', '=', conversationId!).executeTakeFirstOrThrow();
      assert.deepEqual(row.turns[0], { ...row.turns[0], role: 'agent', text: script.greeting });
      assert.equal(row.turns.length, 1 + 2 * script.steps.length);
      assert.equal(row.ended, true);
      const extracted = await llm.extract({ agent: { ...agent, prompt: '', first_message: null }, fields: agent.extraction_fields, transcript: row.turns.map((x) => ({ role: x.role, text: x.text })) });
      assert.deepEqual(extracted, script.extracted);
    });
  }
});
