import { type Static, Type } from 'typebox';
import { ListOf, ListQuery, Nullable, Timestamp } from '../../platform/http/schemas.ts';
import { SOURCE_STATUSES, SOURCE_TYPES } from './tables.ts';

export const KB_STATUSES = ['empty', 'processing', 'ready'] as const;
export type KnowledgeBaseStatus = (typeof KB_STATUSES)[number];

const Language = Type.String({
  pattern: '^[a-z]{2}$',
  description: 'ISO 639-1 code of the documents. Selects the full-text stemmer (en, fr, de, es, it, pt, nl ...); languages without one use simple word matching',
  examples: ['en'],
});

export const KnowledgeBase = Type.Object(
  {
    id: Type.String({ examples: ['kb_01jdq3x4k5m6n7p8q9r0s1t2v3'] }),
    name: Type.String(),
    description: Nullable(Type.String()),
    language: Type.String({ examples: ['en'] }),
    source_count: Type.Integer(),
    chunk_count: Type.Integer(),
    status: Type.Enum(KB_STATUSES, {
      description: 'empty: no source yet; processing: a source is being ingested; ready otherwise',
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'KnowledgeBase' },
);
export type KnowledgeBase = Static<typeof KnowledgeBase>;

export const KnowledgeBaseCreate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
    language: Type.Optional(Language),
  },
  { additionalProperties: false },
);
export type KnowledgeBaseCreate = Static<typeof KnowledgeBaseCreate>;

export const KnowledgeBaseUpdate = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    description: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
    language: Type.Optional(Language),
  },
  { additionalProperties: false, description: 'Changing the language re-indexes every chunk with the new stemmer' },
);
export type KnowledgeBaseUpdate = Static<typeof KnowledgeBaseUpdate>;

export const KnowledgeSource = Type.Object(
  {
    id: Type.String({ examples: ['src_01jdq3x4k5m6n7p8q9r0s1t2v3'] }),
    knowledge_base_id: Type.String(),
    type: Type.Enum(SOURCE_TYPES),
    title: Type.String(),
    url: Type.Optional(Type.String()),
    filename: Type.Optional(Type.String()),
    status: Type.Enum(SOURCE_STATUSES),
    error: Type.Optional(Type.String({ description: 'Why the last ingestion failed' })),
    chunk_count: Type.Integer(),
    bytes: Type.Integer({ description: 'Size of the original document (file, fetched body or text) in bytes' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'KnowledgeSource' },
);
export type KnowledgeSource = Static<typeof KnowledgeSource>;

export const JSON_SOURCE_TYPES = ['text', 'url'] as const;

export const SourceCreateJson = Type.Object(
  {
    type: Type.Enum(JSON_SOURCE_TYPES, {
      description: 'text: give title and text; url: give url (title optional). Files are sent as multipart/form-data',
    }),
    title: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
    text: Type.Optional(Type.String({ minLength: 1, maxLength: 900_000 })),
    url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, examples: ['https://example.com/faq'] })),
  },
  { additionalProperties: false, title: 'KnowledgeSourceCreate' },
);
export type SourceCreateJson = Static<typeof SourceCreateJson>;

/** The multipart form. The handler sees `file` as `sha256:<hex>` of the uploaded bytes (kept aside). */
export const SourceCreateMultipart = Type.Object(
  {
    file: Type.String({ format: 'binary', description: 'txt, md, html, pdf, docx or csv; at most 20 MiB' }),
    title: Type.Optional(Type.String({ minLength: 1, maxLength: 300, description: 'Defaults to the file name' })),
  },
  { additionalProperties: false, title: 'KnowledgeSourceUpload' },
);

export const KnowledgeChunk = Type.Object(
  {
    id: Type.String({ examples: ['chk_01jdq3x4k5m6n7p8q9r0s1t2v3'] }),
    source_id: Type.String(),
    position: Type.Integer({ description: '0-based order of the chunk in its source' }),
    text: Type.String(),
  },
  { title: 'KnowledgeChunk' },
);
export type KnowledgeChunk = Static<typeof KnowledgeChunk>;

export const QueryBody = Type.Object(
  {
    query: Type.String({ minLength: 1, maxLength: 2000, examples: ['How do I reset my password?'] }),
    top_k: Type.Optional(Type.Integer({ minimum: 1, maximum: 20, default: 5 })),
  },
  { additionalProperties: false },
);
export type QueryBody = Static<typeof QueryBody>;

export const SearchResult = Type.Object(
  {
    source_id: Type.String(),
    chunk_id: Type.String(),
    text: Type.String(),
    score: Type.Number({ description: 'Relevance in 0..1; higher is better' }),
  },
  { title: 'KnowledgeSearchResult' },
);
export type SearchResult = Static<typeof SearchResult>;

export const QueryResponse = Type.Object({ results: Type.Array(SearchResult) }, { title: 'KnowledgeQueryResponse' });

export const KnowledgeBaseList = ListOf(KnowledgeBase, 'KnowledgeBaseList');
export const KnowledgeSourceList = ListOf(KnowledgeSource, 'KnowledgeSourceList');
export const KnowledgeChunkList = ListOf(KnowledgeChunk, 'KnowledgeChunkList');

export const ChunkListQuery = ListQuery;

export const KbParams = Type.Object({ id: Type.String({ maxLength: 100, description: 'Knowledge base id (kb_...)' }) });
export const SourceParams = Type.Object({
  id: Type.String({ maxLength: 100, description: 'Knowledge base id (kb_...)' }),
  src: Type.String({ maxLength: 100, description: 'Source id (src_...)' }),
});
