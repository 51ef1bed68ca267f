import { sql } from 'kysely';
import type { Database } from '../../platform/db/schema.ts';
import { VISIBLE_CHUNK } from './repo.ts';

// The semantic half of knowledge search without a vector index: each base's chunk embeddings,
// normalised, in one contiguous Float32Array (row i = chunk ids[i]), kept in process and keyed by
// the base's content_version (which the search reads in its first statement, so a source added or
// deleted through any instance is seen by the next query here). A query is one pass over that
// memory with a size-k heap. Cost grows linearly with chunks × dimensions: bench/README.md gives
// the measured limit and the path past it (pgvector).

export function normalized(vector: ArrayLike<number>): Float32Array {
  const out = Float32Array.from(vector);
  normalizeInPlace(out, 0, out.length);
  return out;
}

function normalizeInPlace(values: Float32Array, offset: number, length: number) {
  let norm = 0;
  for (let i = offset; i < offset + length; i++) norm += values[i] * values[i];
  norm = Math.sqrt(norm) || 1;
  for (let i = offset; i < offset + length; i++) values[i] /= norm;
}

/** Dot product of row `row` of a row-major matrix with `query` (both normalised: the cosine). */
export function rowDot(matrix: Float32Array, dims: number, row: number, query: Float32Array): number {
  let sum = 0;
  const offset = row * dims;
  for (let j = 0; j < dims; j++) sum += matrix[offset + j] * query[j];
  return sum;
}

/**
 * The `k` rows of a row-major matrix (`dims` floats a row) with the largest dot product with
 * `query`, best first (ties by row): one pass over contiguous memory, a size-k min-heap.
 */
export function nearestInMatrix(matrix: Float32Array, dims: number, query: Float32Array, k: number): Array<{ row: number; score: number }> {
  const rows = dims > 0 && query.length === dims ? Math.floor(matrix.length / dims) : 0;
  const size = Math.max(0, Math.min(k, rows));
  const heapRows = new Int32Array(size);
  const heapScores = new Float64Array(size);
  let filled = 0;
  const swap = (a: number, b: number) => {
    const s = heapScores[a];
    heapScores[a] = heapScores[b];
    heapScores[b] = s;
    const r = heapRows[a];
    heapRows[a] = heapRows[b];
    heapRows[b] = r;
  };
  for (let row = 0; row < rows; row++) {
    const offset = row * dims;
    // Four partial sums: independent additions pipeline (about twice the speed of one sum).
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    let j = 0;
    for (; j + 3 < dims; j += 4) {
      s0 += matrix[offset + j] * query[j];
      s1 += matrix[offset + j + 1] * query[j + 1];
      s2 += matrix[offset + j + 2] * query[j + 2];
      s3 += matrix[offset + j + 3] * query[j + 3];
    }
    for (; j < dims; j++) s0 += matrix[offset + j] * query[j];
    const sum = s0 + s1 + s2 + s3;
    if (filled < size) {
      let i = filled++;
      heapScores[i] = sum;
      heapRows[i] = row;
      while (i > 0 && heapScores[(i - 1) >> 1] > heapScores[i]) {
        swap(i, (i - 1) >> 1);
        i = (i - 1) >> 1;
      }
    } else if (size > 0 && sum > heapScores[0]) {
      heapScores[0] = sum;
      heapRows[0] = row;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        let m = i;
        if (l < filled && heapScores[l] < heapScores[m]) m = l;
        if (l + 1 < filled && heapScores[l + 1] < heapScores[m]) m = l + 1;
        if (m === i) break;
        swap(i, m);
        i = m;
      }
    }
  }
  const out = Array.from({ length: filled }, (_, i) => ({ row: heapRows[i], score: heapScores[i] }));
  return out.sort((a, b) => b.score - a.score || a.row - b.row);
}

export interface BaseVectors {
  version: number;
  ids: string[];
  /** Row of each chunk id in `matrix`. */
  rows: Map<string, number>;
  dims: number;
  matrix: Float32Array;
}

/** `{1.5,-2,3e-05}` (real[] as text) into `out` from `offset`; false unless it holds exactly `dims` numbers. */
function parseVector(text: string, dims: number, out: Float32Array, offset: number): boolean {
  const parts = text.slice(1, -1).split(',');
  if (parts.length !== dims) return false;
  for (let j = 0; j < dims; j++) out[offset + j] = Number(parts[j]);
  return true;
}

export function createVectorCache(db: Database, options: { maxBytes: number; maxBases: number }) {
  const maxFloats = Math.floor(options.maxBytes / 4);
  const cache = new Map<string, BaseVectors | { version: number; tooLarge: true }>();
  let cachedFloats = 0;
  const floatsOf = (entry: BaseVectors | { tooLarge: true }) => ('matrix' in entry ? entry.matrix.length : 0);

  /** Rows of `ids` as text, parsed straight into `matrix` from row `first` (no JavaScript array per row); the ids parsed, in order. */
  function readInto(rows: Array<{ id: string; embedding: string }>, dims: number, matrix: Float32Array, first: number): string[] {
    const ids: string[] = [];
    for (const row of rows) {
      const at = (first + ids.length) * dims;
      if (!parseVector(row.embedding, dims, matrix, at)) continue;
      normalizeInPlace(matrix, at, dims);
      ids.push(row.id);
    }
    return ids;
  }

  const visibleOf = (baseId: string, model: string, dims: number) =>
    sql`c.knowledge_base_id = ${baseId} and c.embedding_model = ${model} and cardinality(c.embedding) = ${dims} and ${VISIBLE_CHUNK}`;

  /**
   * After a change of the base: the current chunk ids only, then the vectors of the new ones;
   * rows still present are copied from the previous matrix (adding a source to a 50,000-chunk
   * base reads its ids, not 50,000 vectors again).
   */
  async function update(previous: BaseVectors, version: number, model: string, baseId: string): Promise<BaseVectors | { version: number; tooLarge: true }> {
    const { dims } = previous;
    // Ids only: no embedding is read (cardinality() would detoast each one); the new rows' widths are checked when parsed.
    const { rows: current } = await sql<{ id: string }>`
      select c.id from knowledge_chunks c where c.knowledge_base_id = ${baseId} and c.embedding_model = ${model} and ${VISIBLE_CHUNK}`.execute(db);
    if (current.length * dims > maxFloats) return { version, tooLarge: true };
    const kept = current.filter((r) => previous.rows.has(r.id)).map((r) => r.id);
    const added = current.filter((r) => !previous.rows.has(r.id)).map((r) => r.id);
    const matrix = new Float32Array(current.length * dims);
    for (const [i, id] of kept.entries()) {
      const from = (previous.rows.get(id) as number) * dims;
      matrix.set(previous.matrix.subarray(from, from + dims), i * dims);
    }
    const ids = [...kept];
    for (let i = 0; i < added.length; i += 1000) {
      const { rows } = await sql<{ id: string; embedding: string }>`
        select c.id, c.embedding::text as embedding from knowledge_chunks c where c.id = any(${added.slice(i, i + 1000)}::text[]) and ${visibleOf(baseId, model, dims)}`.execute(db);
      ids.push(...readInto(rows, dims, matrix, ids.length));
    }
    return { version, ids, rows: new Map(ids.map((id, i) => [id, i])), dims, matrix: matrix.subarray(0, ids.length * dims) };
  }

  async function load(baseId: string, version: number, model: string, previous?: BaseVectors): Promise<BaseVectors | { version: number; tooLarge: true }> {
    if (previous && previous.dims > 0) return update(previous, version, model, baseId);
    const size = await db
      .selectFrom('knowledge_chunks as c')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.max(sql<number>`cardinality(c.embedding)`).as('dims')])
      .where('c.knowledge_base_id', '=', baseId)
      .where('c.embedding_model', '=', model)
      .where(VISIBLE_CHUNK)
      .executeTakeFirstOrThrow();
    const dims = Number(size.dims ?? 0);
    if (Number(size.n) * dims > maxFloats) return { version, tooLarge: true };
    const { rows } = await sql<{ id: string; embedding: string }>`
      select c.id, c.embedding::text as embedding from knowledge_chunks c where ${visibleOf(baseId, model, dims)}`.execute(db);
    const matrix = new Float32Array(rows.length * dims);
    const ids = readInto(rows, dims, matrix, 0);
    return { version, ids, rows: new Map(ids.map((id, i) => [id, i])), dims, matrix: matrix.subarray(0, ids.length * dims) };
  }

  return {
    /** The base's vectors of `model` at `version` (loaded once per version); undefined when they exceed the memory budget. */
    async get(baseId: string, version: number, model: string): Promise<BaseVectors | undefined> {
      let entry = cache.get(baseId);
      if (entry && entry.version === version) {
        cache.delete(baseId);
        cache.set(baseId, entry); // most recently used last
      } else {
        const previous = entry && 'matrix' in entry ? entry : undefined;
        if (entry) {
          cachedFloats -= floatsOf(entry);
          cache.delete(baseId);
        }
        entry = await load(baseId, version, model, previous);
        // Another search may have loaded it meanwhile: keep one copy.
        const raced = cache.get(baseId);
        if (raced) cachedFloats -= floatsOf(raced);
        cache.set(baseId, entry);
        cachedFloats += floatsOf(entry);
        // Evict the least recently used bases beyond the budget (never the one just loaded).
        for (const [id, old] of cache) {
          if ((cachedFloats <= maxFloats && cache.size <= options.maxBases) || id === baseId) break;
          cachedFloats -= floatsOf(old);
          cache.delete(id);
        }
      }
      return 'matrix' in entry ? entry : undefined;
    },
  };
}
