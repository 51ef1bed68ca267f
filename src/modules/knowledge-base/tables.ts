import type { ColumnType } from 'kysely';
import type { Timestamp } from '../../platform/db/foundation-tables.ts';

// Tables of knowledge bases (migration 0004): bases, their sources, and the searchable chunks.

export const SOURCE_TYPES = ['text', 'url', 'file'] as const;
export type SourceType = (typeof SOURCE_TYPES)[number];

export const SOURCE_STATUSES = ['processing', 'ready', 'failed'] as const;
export type SourceStatus = (typeof SOURCE_STATUSES)[number];

export interface KnowledgeBasesTable {
  id: string;
  workspace_id: string;
  name: string;
  description: string | null;
  /** ISO 639-1 code as given by the client (default en). */
  language: string;
  /** The PostgreSQL text search configuration the language maps to (english, french ... simple). */
  ts_config: string;
  /** Bumped whenever the set of chunks changes; keys the in-process embedding cache. */
  content_version: ColumnType<number, number | undefined, number>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface KnowledgeSourcesTable {
  id: string;
  workspace_id: string;
  knowledge_base_id: string;
  type: SourceType;
  title: string;
  url: string | null;
  filename: string | null;
  /** Detected document format (txt, md, html, pdf, docx, csv). */
  format: string | null;
  status: SourceStatus;
  error: string | null;
  /** Extracted plain text, kept so a refresh can re-chunk text and file sources; gzip + base64 when long (stored-content.ts). */
  content: string | null;
  chunk_count: number;
  bytes: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface KnowledgeChunksTable {
  id: string;
  workspace_id: string;
  knowledge_base_id: string;
  source_id: string;
  position: number;
  text: string;
  /** tsvector built with the base's ts_config at insert time. */
  tsv: ColumnType<string, unknown, unknown>;
  /** Embedding (real[]) when a provider is configured, with the model that made it. */
  embedding: ColumnType<number[] | null, number[] | null | undefined, number[] | null>;
  embedding_model: string | null;
  created_at: Timestamp;
}

export interface KnowledgeBaseTables {
  knowledge_bases: KnowledgeBasesTable;
  knowledge_sources: KnowledgeSourcesTable;
  knowledge_chunks: KnowledgeChunksTable;
}
