import { uuid } from './runtime.js';

// Request bodies: JSON, form-encoded (Twilio's webhooks), raw uploads (a campaign's CSV) and
// multipart forms (knowledge-base files). A ReadableStream is sent as a stream, never buffered
// (multipart included: the form is written around the file's stream), which makes that request
// one-shot: it is not retried.

/** A file's content, from anywhere: text, bytes, a Blob or File, a web stream. */
export type FileContent = string | Uint8Array | ArrayBuffer | Blob | ReadableStream<Uint8Array>;

/** A file with its name and media type, from `toFile()`. */
export interface FileUpload {
  readonly kind: 'file-upload';
  readonly content: FileContent;
  readonly filename: string;
  readonly contentType: string;
}

/** What an upload accepts. A bare Blob or stream is named `upload`. */
export type Uploadable = FileContent | FileUpload;

/** Names a file's content for a multipart upload: `toFile(fs.openAsBlob(path), 'faq.pdf')`. */
export function toFile(content: FileContent, filename: string, contentType = 'application/octet-stream'): FileUpload {
  return { kind: 'file-upload', content, filename, contentType };
}

export type BodyKind = 'json' | 'form' | 'csv' | 'raw' | 'multipart' | 'json-or-multipart';

export interface EncodedBody {
  body: RequestInit['body'];
  contentType: string | undefined;
  /** False for a stream: it can be sent only once. */
  replayable: boolean;
}

const isStream = (value: unknown): value is ReadableStream<Uint8Array> => typeof ReadableStream !== 'undefined' && value instanceof ReadableStream;
const isFileUpload = (value: unknown): value is FileUpload => typeof value === 'object' && value !== null && (value as FileUpload).kind === 'file-upload';
const isBinary = (value: unknown) =>
  value instanceof Uint8Array || value instanceof ArrayBuffer || (typeof Blob !== 'undefined' && value instanceof Blob) || isStream(value) || isFileUpload(value);

export function encodeBody(kind: BodyKind | undefined, body: unknown): EncodedBody {
  if (body === undefined || kind === undefined) return { body: undefined, contentType: undefined, replayable: true };
  switch (kind) {
    case 'json':
      return { body: JSON.stringify(body), contentType: 'application/json', replayable: true };
    case 'form':
      return { body: new URLSearchParams(body as Record<string, string>).toString(), contentType: 'application/x-www-form-urlencoded', replayable: true };
    case 'csv':
    case 'raw': {
      const content = isFileUpload(body) ? body.content : (body as FileContent);
      return { body: content as RequestInit['body'], contentType: kind === 'csv' ? 'text/csv' : 'application/octet-stream', replayable: !isStream(content) };
    }
    case 'json-or-multipart': {
      const fields = body as Record<string, unknown>;
      if (!Object.values(fields).some(isBinary)) return encodeBody('json', body);
      return multipart(fields);
    }
    case 'multipart':
      return multipart(body as Record<string, unknown>);
  }
}

type Part = string | Uint8Array | ArrayBuffer | Blob | ReadableStream<Uint8Array>;

function multipart(fields: Record<string, unknown>): EncodedBody {
  const boundary = `----voice-agent-sdk-${uuid()}`;
  const parts: Part[] = [];
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined || value === null) continue;
    if (isBinary(value)) {
      const file = isFileUpload(value) ? value : toFile(value as FileContent, 'upload');
      parts.push(`--${boundary}\r\nContent-Disposition: form-data; name="${escapeQuoted(name)}"; filename="${escapeQuoted(file.filename)}"\r\nContent-Type: ${file.contentType}\r\n\r\n`);
      parts.push(file.content);
      parts.push('\r\n');
    } else {
      parts.push(`--${boundary}\r\nContent-Disposition: form-data; name="${escapeQuoted(name)}"\r\n\r\n${String(value)}\r\n`);
    }
  }
  parts.push(`--${boundary}--\r\n`);
  const contentType = `multipart/form-data; boundary=${boundary}`;
  if (!parts.some(isStream)) return { body: new Blob(parts as unknown as ConstructorParameters<typeof Blob>[0]), contentType, replayable: true };
  return { body: concatStreams(parts), contentType, replayable: false };
}

const escapeQuoted = (text: string) => text.replace(/["\r\n]/g, (c) => encodeURIComponent(c));

/** One stream of the parts in order; streams are piped through as they are read. */
function concatStreams(parts: Part[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let index = 0;
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        if (reader) {
          const { done, value } = await reader.read();
          if (!done) return controller.enqueue(value);
          reader = undefined;
        }
        if (index >= parts.length) return controller.close();
        const part = parts[index++];
        if (isStream(part)) reader = part.getReader();
        else if (typeof part === 'string') return controller.enqueue(encoder.encode(part));
        else if (part instanceof Uint8Array) return controller.enqueue(part);
        else if (part instanceof ArrayBuffer) return controller.enqueue(new Uint8Array(part));
        else return controller.enqueue(new Uint8Array(await part.arrayBuffer()));
      }
    },
    cancel(reason) {
      return reader?.cancel(reason);
    },
  });
}
