import type { AgentTemplate } from './schemas.ts';

// Ready-made agents. Each `agent` is a valid POST /v1/agents body (a test creates one from each).
// Function URLs point at example.com: replace them with your own endpoints before going live.
// The questions an agent must ask are written as numbered lines ending in "?": the built-in engine
// asks them in order, so every template works offline too (template-conversations.test.ts runs a
// scripted conversation through each one).

export const AGENT_TEMPLATES: readonly AgentTemplate[] = [
  {
    id: 'receptionist',
    name: 'Receptionist',
    description: 'Answers the main line, takes messages and transfers callers to a person on request.',
    use_case: 'inbound',
    agent: {
      name: 'Receptionist',
      prompt: [
        'You are the friendly receptionist of {{company_name}}. Greet callers, find out what they need and answer simple questions ' +
          '(opening hours, address, directions). If the caller asks for a person, transfer the call. Keep answers short: this is a phone call.',
        'Otherwise take a message, asking these questions one at a time:',
        '1. May I have your name, please?',
        '2. What is the best number to call you back on?',
        '3. What is the message you would like to leave?',
        '4. Is it urgent?',
      ].join('\n'),
      first_message: 'Thank you for calling {{company_name}}. How can I help you today?',
      language: 'en-US',
      voice: 'builtin-ava',
      llm: { provider: 'builtin', temperature: 0.5 },
      transfer_number: '+15550100200',
      extraction_fields: [
        { name: 'caller_name', type: 'string', description: 'Full name of the caller' },
        { name: 'callback_number', type: 'string', description: 'Phone number to call back' },
        { name: 'reason', type: 'string', description: 'Why the caller called, in one sentence' },
        { name: 'urgent', type: 'boolean', description: 'Whether the caller says it is urgent' },
      ],
      end_call_phrases: ['that is all', 'nothing else'],
      max_duration_seconds: 600,
      voicemail: { action: 'leave_message', message: 'Hello, this is {{company_name}} returning your call. Please call us back at your convenience.' },
      metadata: { template: 'receptionist' },
    },
  },
  {
    id: 'appointment-booking',
    name: 'Appointment booking',
    description: 'Checks availability and books, moves or cancels appointments through your scheduling API.',
    use_case: 'inbound',
    agent: {
      name: 'Appointment booking',
      prompt:
        'You book appointments for {{business_name}}. Ask which service the caller wants and their preferred day and time, ' +
        'check availability with the check_availability function, then confirm and book with book_appointment. ' +
        'Always repeat the date and time back before booking. Collect the caller name and phone number.\n' +
        'Replace the example.com function URLs with your own scheduling API before going live.',
      first_message: 'Hi, you have reached {{business_name}} bookings. Would you like to book an appointment?',
      language: 'en-US',
      voice: 'builtin-sam',
      llm: { provider: 'builtin', temperature: 0.3 },
      functions: [
        {
          name: 'check_availability',
          description: 'Check availability of open appointment slots for a service on a date',
          url: 'https://example.com/api/availability',
          method: 'POST',
          parameters: {
            type: 'object',
            properties: { service: { type: 'string', description: 'The service wanted' }, date: { type: 'string', format: 'date', description: 'Day to check, YYYY-MM-DD' } },
            required: ['date'],
          },
          timeout_ms: 5000,
        },
        {
          name: 'book_appointment',
          description: 'Book an appointment slot for the caller',
          url: 'https://example.com/api/appointments',
          method: 'POST',
          parameters: {
            type: 'object',
            properties: {
              service: { type: 'string', description: 'The service to book' },
              date: { type: 'string', format: 'date', description: 'Day of the appointment, YYYY-MM-DD' },
              time: { type: 'string', description: 'Start time, HH:MM' },
              name: { type: 'string', description: "The caller's full name" },
              phone: { type: 'string', description: "The caller's phone number" },
            },
            required: ['date', 'time', 'name'],
          },
          timeout_ms: 8000,
        },
      ],
      extraction_fields: [
        { name: 'customer_name', type: 'string', description: 'Name of the customer' },
        { name: 'phone', type: 'string', description: 'Phone number of the customer' },
        { name: 'appointment_date', type: 'string', description: 'Date of the booked appointment' },
        { name: 'booked', type: 'boolean', description: 'Whether an appointment was booked' },
      ],
      end_call_phrases: ['see you then'],
      max_duration_seconds: 600,
      voicemail: { action: 'hangup' },
      metadata: { template: 'appointment-booking' },
    },
  },
  {
    id: 'lead-qualification',
    name: 'Lead qualification',
    description: 'Calls or answers new leads, asks qualifying questions (budget, timeline, need) and scores them.',
    use_case: 'outbound',
    agent: {
      name: 'Lead qualification',
      prompt: [
        'You are a sales development representative for {{company_name}}. You are speaking with {{lead_name}}, who showed ' +
          'interest in {{product}}. Be polite and brief. If they are interested in talking to sales now, transfer the call.',
        'Qualify the lead by asking these questions one at a time:',
        '1. What would you like {{product}} to help you with?',
        '2. What budget do you have in mind, in US dollars?',
        '3. When do you plan to buy: now, this quarter, this year or later?',
        '4. What email address should we send more information to?',
      ].join('\n'),
      first_message: 'Hi {{lead_name}}, this is Ben from {{company_name}}. You asked about {{product}}; do you have two minutes?',
      language: 'en-US',
      voice: 'builtin-ben',
      llm: { provider: 'builtin', temperature: 0.6 },
      transfer_number: '+15550100201',
      extraction_fields: [
        { name: 'interested', type: 'boolean', description: 'Whether the lead is interested' },
        { name: 'budget', type: 'number', description: 'Budget in USD the lead mentions' },
        { name: 'timeline', type: 'enum', description: 'When the lead plans to buy', enum: ['now', 'this_quarter', 'this_year', 'later'] },
        { name: 'email', type: 'string', description: 'Email address for follow-up' },
      ],
      end_call_phrases: ['not interested', 'remove me from your list'],
      max_duration_seconds: 420,
      voicemail: { action: 'leave_message', message: 'Hi {{lead_name}}, this is {{company_name}} following up on your interest in {{product}}. We will try again soon.' },
      metadata: { template: 'lead-qualification' },
    },
  },
  {
    id: 'customer-support',
    name: 'Support with knowledge base',
    description: 'Answers product questions from your knowledge base and hands over to a human when it cannot help.',
    use_case: 'inbound',
    agent: {
      name: 'Customer support',
      prompt:
        'You are the support agent of {{company_name}}. Answer only from the knowledge base passages you are given; if they ' +
        'do not answer the question, say so and offer to transfer the caller to a human. Never invent policies, prices or dates. ' +
        'Attach a knowledge base to this agent (knowledge_base_ids) before using it.',
      first_message: 'Hello, you are through to {{company_name}} support. What can I help you with?',
      language: 'en-US',
      voice: 'builtin-cora',
      llm: { provider: 'builtin', temperature: 0.2 },
      knowledge_base_ids: [],
      transfer_number: '+15550100202',
      extraction_fields: [
        { name: 'issue', type: 'string', description: 'The problem the caller reports' },
        { name: 'resolved', type: 'boolean', description: 'Whether the question was answered' },
        { name: 'category', type: 'enum', description: 'Topic of the call', enum: ['billing', 'technical', 'account', 'other'] },
      ],
      end_call_phrases: ['that solved it', 'that is all'],
      max_duration_seconds: 900,
      voicemail: { action: 'hangup' },
      metadata: { template: 'customer-support' },
    },
  },
  {
    id: 'outbound-survey',
    name: 'Outbound survey',
    description: 'Runs a short customer-satisfaction survey on outbound calls (pairs well with campaigns).',
    use_case: 'outbound',
    agent: {
      name: 'Satisfaction survey',
      prompt: [
        'You run a three-question satisfaction survey for {{company_name}} with {{first_name}}. Do not sell anything.',
        'Ask these questions one at a time, then thank them and end the call:',
        '1. On a scale from 1 to 10, how satisfied were you with your visit?',
        '2. Would you recommend us to a friend?',
        '3. What could we improve?',
      ].join('\n'),
      first_message: 'Hello {{first_name}}, this is {{company_name}}. Could you answer three quick questions about your recent visit?',
      language: 'en-US',
      voice: 'builtin-ava',
      llm: { provider: 'builtin', temperature: 0.4 },
      extraction_fields: [
        { name: 'satisfaction', type: 'number', description: 'Satisfaction score from 1 to 10' },
        { name: 'would_recommend', type: 'boolean', description: 'Whether they would recommend us' },
        { name: 'improvement', type: 'string', description: 'What we could improve' },
      ],
      end_call_phrases: ['no thanks', 'not now'],
      max_duration_seconds: 300,
      voicemail: { action: 'hangup' },
      metadata: { template: 'outbound-survey' },
    },
  },
];
