import multipart, { type MultipartFile } from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';
import { assertAcceptableBody } from './input-guard.ts';

// multipart/form-data for the operations that take a file (knowledge-base sources, campaign
// uploads). The form is read before validation into a plain body of its fields, so it is checked
// by the route's schema like JSON; each file part is handed to `onFile`, which keeps the bytes
// aside and answers the value the body holds for it. A form busboy cannot read (no boundary, a
// boundary that never comes, a malformed part header, a truncated body) is 400 bad_request, and a
// part over a limit 413: never a 500.

export interface MultipartFormOptions {
  limits: { fileSize: number; files: number; fields: number; parts: number; fieldSize: number };
  /** Reads a file part (its stream must be consumed) and returns the body's value for it. */
  onFile(request: FastifyRequest, part: MultipartFile): Promise<string>;
}

const MALFORMED = 'the multipart/form-data body is malformed';

function asProblem(error: unknown): unknown {
  if (error instanceof AppError) return error;
  const status = (error as { statusCode?: number }).statusCode;
  // @fastify/multipart's own errors carry their status (413 limits, 406 not multipart, 400 ...).
  if (typeof status === 'number' && status >= 400 && status < 500) return error;
  return new AppError('bad_request', `${MALFORMED}: ${error instanceof Error ? error.message : 'unreadable'}`);
}

async function readForm(request: FastifyRequest, options: MultipartFormOptions): Promise<Record<string, unknown>> {
  const body: Record<string, unknown> = {};
  for await (const part of request.parts()) {
    if (part.type === 'file') {
      if (part.filename.includes('\u0000')) {
        part.file.resume();
        throw new AppError('validation_failed', `${part.fieldname}: the file name must not contain the NUL character (U+0000)`, {
          errors: [{ path: part.fieldname, message: 'the file name must not contain the NUL character (U+0000)' }],
        });
      }
      body[part.fieldname] = await options.onFile(request, part);
    } else {
      body[part.fieldname] = part.value;
    }
  }
  return body;
}

/** Registers multipart parsing on this plugin's routes; call inside the plugin of the routes. */
export async function registerMultipartForm(app: FastifyInstance, options: MultipartFormOptions) {
  await app.register(multipart, { limits: options.limits });
  app.addHook('preValidation', async (request) => {
    if (!request.isMultipart()) return;
    let body: Record<string, unknown>;
    try {
      body = await readForm(request, options);
    } catch (error) {
      throw asProblem(error);
    }
    assertAcceptableBody(body);
    request.body = body;
  });
}
