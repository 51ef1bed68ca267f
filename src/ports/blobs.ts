// The blob store: recordings (and later other large binary results) kept apart from the rows
// that name them. Keys are opaque paths such as `recordings/<workspace>/<call>.mp3`.

export interface StoredBlob {
  bytes: Buffer;
  contentType: string;
  size: number;
}

export interface BlobStore {
  readonly kind: 'fs' | 'postgres';
  put(key: string, bytes: Buffer, contentType: string): Promise<void>;
  /** The whole blob, or null when there is none. */
  get(key: string): Promise<StoredBlob | null>;
  /** Bytes `start..end` inclusive (HTTP Range semantics, already clamped by the caller), or null. */
  getRange(key: string, start: number, end: number): Promise<StoredBlob | null>;
  /** Size and type without the bytes, or null. */
  stat(key: string): Promise<{ size: number; contentType: string } | null>;
  /** Removes the blob; removing a missing one is not an error. */
  delete(key: string): Promise<void>;
}
