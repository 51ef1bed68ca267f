import { type Static, Type } from 'typebox';
import { VOICE_GENDERS } from '../../ports/tts.ts';
import { mediaBody } from '../../platform/http/schemas.ts';
import { AgentCreate } from '../agents/schemas.ts';

// The catalog: voices agents can speak with (built-in and configured TTS providers) and agent
// templates (ready-made POST /v1/agents bodies).

export const Voice = Type.Object(
  {
    id: Type.String({ examples: ['builtin-ava'] }),
    name: Type.String({ examples: ['Ava'] }),
    language: Type.String({ description: 'BCP 47 tag of the accent', examples: ['en-US'] }),
    gender: Type.Enum(VOICE_GENDERS),
    provider: Type.String({ examples: ['builtin'] }),
    description: Type.String(),
    preview_url: Type.String({ description: 'GET it (authenticated) for an MP3 sample', examples: ['http://localhost:3000/v1/voices/builtin-ava/preview'] }),
  },
  { title: 'Voice' },
);
export type Voice = Static<typeof Voice>;

export const VoiceListQuery = Type.Object({
  language: Type.Optional(Type.String({ maxLength: 20, description: 'Voices of this language (en-US) or language family (en)' })),
  provider: Type.Optional(Type.String({ maxLength: 50 })),
  gender: Type.Optional(Type.Enum(VOICE_GENDERS)),
});
export type VoiceListQuery = Static<typeof VoiceListQuery>;

export const VoiceList = Type.Object(
  { data: Type.Array(Voice), has_more: Type.Boolean(), next_cursor: Type.Union([Type.String(), Type.Null()]) },
  { title: 'VoiceList' },
);

export const VoiceParams = Type.Object({ id: Type.String({ maxLength: 100, description: 'Voice id' }) });

export const PreviewQuery = Type.Object({
  text: Type.Optional(Type.String({ minLength: 1, maxLength: 300, description: 'Text to speak instead of the sample sentence' })),
});

export const Mp3Audio = mediaBody('audio/mpeg', 'MP3 audio', { binary: true });

export const NotModified = Type.Null({ description: 'Not modified (If-None-Match matched the ETag)' });

export const AgentTemplate = Type.Object(
  {
    id: Type.String({ examples: ['receptionist'] }),
    name: Type.String(),
    description: Type.String(),
    use_case: Type.String({ description: 'inbound or outbound' }),
    agent: AgentCreate,
  },
  { title: 'AgentTemplate' },
);
export type AgentTemplate = Static<typeof AgentTemplate>;

export const AgentTemplateList = Type.Object(
  { data: Type.Array(AgentTemplate), has_more: Type.Boolean(), next_cursor: Type.Union([Type.String(), Type.Null()]) },
  { title: 'AgentTemplateList' },
);
