import { type Static, Type } from 'typebox';
import { ListQuery, Nullable, Timestamp } from '../../platform/http/schemas.ts';
import { COLOR_PATTERN } from '../branding/schemas.ts';
import { WIDGET_MODES, WIDGET_POSITIONS } from './tables.ts';

// Widgets: an agent embedded in third-party web pages (chat, voice or both), the public config
// its script reads, the public chat, and the conversations it kept.

export const MAX_MESSAGE_LENGTH = 2000;
export const DEFAULT_PRIMARY_COLOR = '#4f46e5';

const ThemeInput = Type.Object(
  {
    title: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: "Panel title (default: the agent's name)" })),
    greeting: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 500, description: "First line shown (default: the agent's first_message)" }))),
    primary_color: Type.Optional(Type.String({ pattern: COLOR_PATTERN, description: `Hex colour #rrggbb (default ${DEFAULT_PRIMARY_COLOR})` })),
    position: Type.Optional(Type.Enum(WIDGET_POSITIONS, { description: 'Default bottom-right' })),
  },
  { additionalProperties: false, description: 'Merged into the current theme on update' },
);

export const Theme = Type.Object(
  {
    title: Type.String(),
    greeting: Nullable(Type.String()),
    primary_color: Type.String({ examples: [DEFAULT_PRIMARY_COLOR] }),
    position: Type.Enum(WIDGET_POSITIONS),
  },
  { title: 'WidgetTheme' },
);

const Origins = Type.Array(Type.String({ minLength: 1, maxLength: 300, description: 'An origin: scheme://host[:port]' }), {
  maxItems: 50,
  description: 'Origins whose pages may use the widget (its public endpoints check Origin); empty: any',
});

const writable = {
  agent_id: Type.String({ minLength: 1, maxLength: 64 }),
  name: Type.String({ minLength: 1, maxLength: 200 }),
  mode: Type.Enum(WIDGET_MODES, { description: 'chat, voice or both (default chat)' }),
  theme: ThemeInput,
  allowed_origins: Origins,
};
const optionalWritable = Type.Partial(Type.Object(writable)).properties;

export const WidgetCreate = Type.Object(
  { ...optionalWritable, agent_id: writable.agent_id },
  {
    additionalProperties: false,
    title: 'WidgetCreate',
    examples: [
      {
        agent_id: 'agent_01jdq3x4k5m6n7p8q9r0s1t2v3',
        name: 'Website assistant',
        mode: 'both',
        theme: { title: 'Ask us anything', greeting: 'Hi! How can I help?', primary_color: '#0e7490', position: 'bottom-right' },
        allowed_origins: ['https://www.example.com'],
      },
    ],
  },
);
export type WidgetCreate = Static<typeof WidgetCreate>;

export const WidgetUpdate = Type.Object(optionalWritable, { additionalProperties: false, title: 'WidgetUpdate', description: 'Fields to change; theme is merged' });
export type WidgetUpdate = Static<typeof WidgetUpdate>;

export const Widget = Type.Object(
  {
    id: Type.String({ examples: ['wdg_01jdq3x4k5m6n7p8q9r0s1t2v3'] }),
    agent_id: Type.String(),
    name: Type.String(),
    mode: Type.Enum(WIDGET_MODES),
    theme: Theme,
    allowed_origins: Type.Array(Type.String()),
    embed_url: Type.String({ description: 'The script URL' }),
    embed_code: Type.String({ description: 'The tag to paste into a page' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'Widget' },
);
export type Widget = Static<typeof Widget>;

export const WidgetListQuery = Type.Object({ ...ListQuery.properties, agent_id: Type.Optional(Type.String({ maxLength: 64 })) }, { additionalProperties: false });
export type WidgetListQuery = Static<typeof WidgetListQuery>;

export const WidgetConfig = Type.Object(
  {
    id: Type.String(),
    agent_name: Type.String(),
    mode: Type.Enum(WIDGET_MODES),
    theme: Type.Object({ title: Type.String(), primary_color: Type.String(), position: Type.Enum(WIDGET_POSITIONS) }, { title: 'WidgetPublicTheme' }),
    greeting: Type.String(),
  },
  { title: 'WidgetConfig', description: 'What the embed script needs; never the prompt' },
);
export type WidgetConfig = Static<typeof WidgetConfig>;

export const WidgetChatBody = Type.Object(
  {
    message: Type.String({ minLength: 1, maxLength: MAX_MESSAGE_LENGTH }),
    conversation_id: Type.Optional(Type.String({ maxLength: 100, description: 'conv_ id of an earlier reply to continue that conversation' })),
    visitor_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.:-]+$', description: "Your (or the script's) id of the visitor" })),
  },
  { additionalProperties: false, title: 'WidgetChatBody' },
);
export type WidgetChatBody = Static<typeof WidgetChatBody>;

export const WidgetChatReply = Type.Object(
  {
    conversation_id: Type.String({ examples: ['conv_01jdq3x4k5m6n7p8q9r0s1t2v3'] }),
    reply: Type.String(),
    ended: Type.Boolean({ description: 'The agent ended the conversation: start a new one' }),
  },
  { title: 'WidgetChatReply' },
);

export const WidgetVoiceBody = Type.Object(
  { visitor_id: WidgetChatBody.properties.visitor_id },
  { additionalProperties: false, title: 'WidgetVoiceBody' },
);

const Message = Type.Object({ role: Type.Enum(['agent', 'user']), text: Type.String(), at: Timestamp }, { title: 'WidgetMessage' });
const conversationFields = {
  id: Type.String({ examples: ['conv_01jdq3x4k5m6n7p8q9r0s1t2v3'] }),
  widget_id: Type.String(),
  agent_id: Type.String(),
  visitor_id: Nullable(Type.String()),
  message_count: Type.Integer(),
  last_message: Nullable(Type.String({ description: 'The latest message (shortened to 200 characters)' })),
  ended: Type.Boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
};
export const WidgetConversation = Type.Object(conversationFields, { title: 'WidgetConversation' });
export const WidgetConversationDetail = Type.Object({ ...conversationFields, messages: Type.Array(Message) }, { title: 'WidgetConversationDetail' });
export type WidgetConversationDetail = Static<typeof WidgetConversationDetail>;
export const ConversationListQuery = Type.Object({ ...ListQuery.properties, visitor_id: Type.Optional(Type.String({ maxLength: 100 })) }, { additionalProperties: false });
export type ConversationListQuery = Static<typeof ConversationListQuery>;
