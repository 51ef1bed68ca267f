import { randomBytes } from 'node:crypto';

// multipart/form-data bodies for tests: plain fields and any number of file parts, in order.

/** A plain field, or a file part (one with a filename). */
export type FormPart = { name: string; value: string } | { name: string; filename: string; contentType: string; data: Buffer | string };

/** The body of these parts under `boundary` (which the caller may leave out of the Content-Type on purpose). */
export function multipartBody(parts: readonly FormPart[], boundary: string): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    if ('filename' in part) {
      chunks.push(
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"; filename="${part.filename}"\r\nContent-Type: ${part.contentType}\r\n\r\n`),
        Buffer.from(part.data),
        Buffer.from('\r\n'),
      );
    } else {
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`));
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

/** A request's payload and Content-Type header for these parts, under a fresh boundary. */
export function multipartForm(parts: readonly FormPart[]): { payload: Buffer; headers: { 'content-type': string } } {
  const boundary = `----form${randomBytes(8).toString('hex')}`;
  return { payload: multipartBody(parts, boundary), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}
