import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { workspaceOf } from '../../../platform/auth/authenticate.ts';
import type { BlobStore } from '../../../ports/blobs.ts';
import { AppError, notFound } from '../../../platform/errors.ts';
import { IdParams, ListOf, mediaBody, NoContent } from '../../../platform/http/schemas.ts';
import { pageRequest } from '../../../platform/pagination.ts';
import { type CallReads, EXPORT_MAX_ROWS } from '../reads.ts';
import { Call, CallEvents, CallListQuery, TranscriptDocument } from '../schemas.ts';
import type { TranscriptEntry } from '../tables.ts';

// Reading calls: list, detail, CSV export, state history, transcript and recording (signed links
// work without credentials), and DELETE, which keeps the row and removes its content.

const tags = ['calls'];
const read = { access: { auth: 'workspace', scope: 'read-only' } } as const;
const readOrSigned = { access: { auth: 'workspace', scope: 'read-only', signedLink: true } } as const;
const write = { access: { auth: 'workspace', scope: 'write' } } as const;
const CallParams = IdParams('Call id (call_…)');
const SignedQuery = Type.Object(
  {
    expires: Type.Optional(Type.String({ maxLength: 20, description: 'Signed links: expiry (unix seconds)' })),
    signature: Type.Optional(Type.String({ maxLength: 128, description: 'Signed links: HMAC signature' })),
  },
  { additionalProperties: false },
);
/** A pending recording is usually stored within seconds of the call's end. */
const RECORDING_RETRY_AFTER_SECONDS = 5;

export interface ReadRouteDeps {
  reads: CallReads;
  /** Where recordings are (served with Range support). */
  blobs: BlobStore;
}

export function callReadRoutes(deps: ReadRouteDeps): FastifyPluginAsyncTypebox {
  const { reads } = deps;

  /** The call of a route that accepts signed links: by the signature, or by the caller's workspace. */
  function callFor(request: FastifyRequest<{ Params: { id: string }; Querystring: { expires?: string; signature?: string } }>, path: string) {
    const { id } = request.params;
    if (request.signedLink) return reads.signedCallOf(path, id, request.query.expires, request.query.signature);
    return reads.callOf(workspaceOf(request).workspaceId, id);
  }

  async function sendRecording(request: FastifyRequest<{ Params: { id: string }; Querystring: { expires?: string; signature?: string } }>, reply: FastifyReply, suffix: string) {
    const row = await callFor(request, `/v1/calls/${request.params.id}${suffix}`);
    if (row.recording_status === 'pending' && !row.content_deleted_at) {
      throw new AppError('recording_not_ready', 'the recording is being made from the call\'s audio; retry shortly', { headers: { 'Retry-After': String(RECORDING_RETRY_AFTER_SECONDS) } });
    }
    if (!row.recording_key || row.content_deleted_at) throw notFound('recording');
    const stat = await deps.blobs.stat(row.recording_key);
    if (!stat) throw notFound('recording');
    reply.header('Accept-Ranges', 'bytes').header('Cache-Control', 'private, max-age=3600').type('audio/mpeg');
    const range = parseRange(request.headers.range, stat.size);
    if (range === 'unsatisfiable') {
      throw new AppError('range_not_satisfiable', `the recording has ${stat.size} bytes`, { headers: { 'Content-Range': `bytes */${stat.size}` } });
    }
    if (range) {
      const part = await deps.blobs.getRange(row.recording_key, range.start, range.end);
      if (!part) throw notFound('recording');
      return reply.code(206).header('Content-Range', `bytes ${range.start}-${range.end}/${stat.size}`).send(part.bytes);
    }
    const whole = await deps.blobs.get(row.recording_key);
    if (!whole) throw notFound('recording');
    return reply.send(whole.bytes);
  }

  return async (app) => {
    app.get(
      '/v1/calls',
      { schema: { operationId: 'listCalls', summary: 'List calls, newest first, with filters', tags, querystring: CallListQuery, response: { 200: ListOf(Call, 'CallList') } }, config: read },
      async (request) => reads.list(workspaceOf(request).workspaceId, request.query, pageRequest(request.query)),
    );

    app.get(
      '/v1/calls/export',
      {
        schema: {
          operationId: 'exportCalls',
          summary: `Calls as CSV (text/csv), newest first, with the list's filters; at most ${EXPORT_MAX_ROWS} rows`,
          tags,
          querystring: Type.Omit(CallListQuery, ['limit', 'cursor']),
          response: { 200: mediaBody('text/csv', 'CSV with a header row') },
        },
        config: read,
      },
      async (request, reply) => {
        const csv = await reads.exportCsv(workspaceOf(request).workspaceId, request.query);
        return reply.type('text/csv; charset=utf-8').header('Content-Disposition', 'attachment; filename="calls.csv"').send(csv as never);
      },
    );

    app.get(
      '/v1/calls/:id',
      { schema: { operationId: 'getCall', summary: 'Get a call with its transcript, extracted fields, cost and latency', tags, params: CallParams, response: { 200: Call } }, config: read },
      async (request) => reads.get(workspaceOf(request).workspaceId, request.params.id),
    );

    app.get(
      '/v1/calls/:id/events',
      { schema: { operationId: 'getCallEvents', summary: 'State history of a call, oldest first, from queued', tags, params: CallParams, response: { 200: CallEvents } }, config: read },
      async (request) => reads.events(workspaceOf(request).workspaceId, request.params.id),
    );

    app.get(
      '/v1/calls/:id/transcript',
      {
        schema: {
          operationId: 'getCallTranscript',
          summary: 'The transcript as JSON, or as text/plain lines (agent: … / user: …) by Accept; works with a signed link',
          tags,
          params: CallParams,
          querystring: SignedQuery,
          response: {
            200: {
              description: 'The transcript',
              content: { 'application/json': { schema: TranscriptDocument }, 'text/plain': { schema: { type: 'string', description: 'One line per entry: `agent: …` / `user: …`' } } },
            },
          },
        },
        config: readOrSigned,
      },
      async (request, reply) => {
        const row = await callFor(request, `/v1/calls/${request.params.id}/transcript`);
        if (row.content_deleted_at) throw notFound('transcript');
        const transcript = row.transcript as TranscriptEntry[];
        const accept = request.headers.accept ?? '';
        if (/text\/plain/.test(accept) && !/application\/json/.test(accept)) {
          return reply.type('text/plain; charset=utf-8').send(transcript.map((e) => `${e.role}: ${e.text}`).join('\n') as never);
        }
        return { call_id: row.id, transcript };
      },
    );

    for (const [suffix, operationId] of [['/recording', 'getCallRecording'], ['/recording.mp3', 'getCallRecordingMp3']] as const) {
      app.get(
        `/v1/calls/:id${suffix}`,
        {
          schema: {
            operationId,
            summary: 'The recording (audio/mpeg, both sides mixed), with Range support; works with a signed link; 409 recording_not_ready (Retry-After) while it is being made',
            tags,
            params: CallParams,
            querystring: SignedQuery,
            response: {
              200: mediaBody('audio/mpeg', 'MP3 audio', { binary: true }),
              206: mediaBody('audio/mpeg', 'Part of the MP3 audio (Range)', { binary: true }),
            },
          },
          config: readOrSigned,
        },
        (request, reply) => sendRecording(request, reply, suffix),
      );
    }

    app.delete(
      '/v1/calls/:id',
      {
        schema: { operationId: 'deleteCall', summary: 'Delete a call\'s recording and transcript; the row stays (status, cost); 409 while live', tags, params: CallParams, response: { 204: NoContent } },
        config: write,
      },
      async (request, reply) => {
        await reads.removeContent(workspaceOf(request).workspaceId, request.params.id);
        return reply.code(204).send(null);
      },
    );
  };
}

/** One `bytes=` range clamped to the size, null for no (or an ignored multi-) range. */
function parseRange(header: string | undefined, size: number): { start: number; end: number } | null | 'unsatisfiable' {
  if (!header) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return null;
  let start: number;
  let end: number;
  if (match[1] === '') {
    // The last N bytes (`bytes=-0` asks for none: its start lands past its end).
    start = Math.max(0, size - Number(match[2]));
    end = size - 1;
  } else {
    start = Number(match[1]);
    end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  }
  // The end is at most the last byte, so a start at or past the size is past the end too.
  if (start > end) return 'unsatisfiable';
  return { start, end };
}
