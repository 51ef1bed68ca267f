// The embeddings port: turns texts into vectors. Retrieval works without one (full-text only);
// with one configured (EMBEDDINGS_BASE_URL) search blends cosine similarity into the rank.

export interface EmbeddingsProvider {
  /** Model name stored beside each vector, so vectors of another model are never compared. */
  readonly model: string;
  /** One vector per input text, in input order. Throws on provider failure. */
  embed(texts: string[]): Promise<number[][]>;
}
