import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { jwtVerify } from 'jose';

// A local stand-in for a LiveKit server's RoomService, for tests: Twirp JSON over HTTP at
// POST /twirp/livekit.RoomService/<Method>, each call authorised like LiveKit does it (a Bearer
// JWT signed HS256 with the API secret, iss = the API key, a `video` grant with the method's
// right). Rooms live in memory; nothing here carries media.

/** The grant each method needs, as LiveKit checks it (DeleteRoom asks for roomCreate too). */
const METHOD_GRANTS = { CreateRoom: 'roomCreate', DeleteRoom: 'roomCreate', ListRooms: 'roomList' } as const;
type RoomServiceMethod = keyof typeof METHOD_GRANTS;

export interface FakeLiveKitRoom {
  sid: string;
  name: string;
  emptyTimeout: number;
  maxParticipants: number;
  creationTime: number;
}

export interface FakeLiveKitRequest {
  /** `CreateRoom`, `ListRooms` … (or the raw path of an unknown route). */
  method: string;
  status: number;
  /** The `video` grant of the caller's token, when it verified. */
  grant?: Record<string, unknown>;
  body?: Record<string, unknown>;
}

class TwirpFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const ROUTE = /^\/twirp\/livekit\.RoomService\/([A-Za-z]+)$/;

function isMethod(name: string): name is RoomServiceMethod {
  return Object.hasOwn(METHOD_GRANTS, name);
}

/** A field the client may send in camelCase (protobuf JSON) or snake_case (LiveKit accepts both). */
function field(body: Record<string, unknown>, camel: string, snake: string): unknown {
  return body[camel] ?? body[snake];
}

function toJson(room: FakeLiveKitRoom) {
  // Twirp answers with the protobuf field names; int64 fields are JSON strings.
  return {
    sid: room.sid,
    name: room.name,
    empty_timeout: room.emptyTimeout,
    max_participants: room.maxParticipants,
    creation_time: String(room.creationTime),
    num_participants: 0,
  };
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** The caller's `video` grant, when its token is LiveKit's (HS256, iss = the key, unexpired) and has the method's right. */
async function authorise(header: string | undefined, method: RoomServiceMethod, apiKey: string, secret: Uint8Array): Promise<Record<string, unknown>> {
  const token = header?.startsWith('Bearer ') ? header.slice('Bearer '.length) : undefined;
  if (!token) throw new TwirpFailure(401, 'unauthenticated', 'no authorization token');
  let video: unknown;
  try {
    const { payload } = await jwtVerify(token, secret, { algorithms: ['HS256'], issuer: apiKey, requiredClaims: ['exp'] });
    video = payload['video'];
  } catch (error) {
    throw new TwirpFailure(401, 'unauthenticated', `invalid token: ${(error as Error).message}`);
  }
  const grant = video && typeof video === 'object' ? (video as Record<string, unknown>) : {};
  if (grant[METHOD_GRANTS[method]] !== true) throw new TwirpFailure(401, 'unauthenticated', `permissions denied: ${METHOD_GRANTS[method]} required`);
  return grant;
}

function runMethod(rooms: Map<string, FakeLiveKitRoom>, method: RoomServiceMethod, body: Record<string, unknown>): unknown {
  if (method === 'ListRooms') {
    const names = body['names'];
    const wanted = Array.isArray(names) && names.length > 0 ? new Set(names.map(String)) : null;
    return { rooms: [...rooms.values()].filter((room) => !wanted || wanted.has(room.name)).map(toJson) };
  }
  const name = String((method === 'CreateRoom' ? body['name'] : body['room']) ?? '');
  if (!name) throw new TwirpFailure(400, 'invalid_argument', 'a room name is required');
  if (method === 'DeleteRoom') {
    if (!rooms.delete(name)) throw new TwirpFailure(404, 'not_found', 'room not found');
    return {};
  }
  // LiveKit answers CreateRoom for an existing room with that room, unchanged.
  const existing = rooms.get(name);
  if (existing) return toJson(existing);
  const room: FakeLiveKitRoom = {
    sid: `RM_${randomBytes(6).toString('hex')}`,
    name,
    emptyTimeout: Number(field(body, 'emptyTimeout', 'empty_timeout') ?? 0),
    maxParticipants: Number(field(body, 'maxParticipants', 'max_participants') ?? 0),
    creationTime: Math.floor(Date.now() / 1000),
  };
  rooms.set(name, room);
  return toJson(room);
}

function parseBody(text: string): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(text || '{}');
  } catch {
    throw new TwirpFailure(400, 'malformed', 'the body is not JSON');
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new TwirpFailure(400, 'malformed', 'the body is not a JSON object');
  return body as Record<string, unknown>;
}

export async function startFakeLiveKit(options: { apiKey: string; apiSecret: string }) {
  const secret = new TextEncoder().encode(options.apiSecret);
  const requests: FakeLiveKitRequest[] = [];
  const rooms = new Map<string, FakeLiveKitRoom>();

  /** One call, recorded; a refusal is answered as Twirp does: an HTTP status and {code, msg}. */
  async function handle(req: http.IncomingMessage): Promise<{ status: number; answer: unknown }> {
    const method = ROUTE.exec(req.url ?? '')?.[1] ?? '';
    const record: FakeLiveKitRequest = { method: method || String(req.url), status: 200 };
    requests.push(record);
    try {
      if (req.method !== 'POST' || !isMethod(method)) throw new TwirpFailure(404, 'bad_route', `no handler for ${req.method} ${req.url}`);
      record.grant = await authorise(req.headers.authorization, method, options.apiKey, secret);
      record.body = parseBody(await readBody(req));
      return { status: 200, answer: runMethod(rooms, method, record.body) };
    } catch (error) {
      const failure = error instanceof TwirpFailure ? error : new TwirpFailure(500, 'internal', String(error));
      record.status = failure.status;
      return { status: failure.status, answer: { code: failure.code, msg: failure.message } };
    }
  }

  const server = http.createServer((req, res) => {
    // The SDK reads a Twirp error only when the content type is exactly application/json.
    void handle(req).then(({ status, answer }) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(answer)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    /** A LIVEKIT_URL as clients get it; the SDK calls the RoomService at its http:// twin. */
    url: `ws://127.0.0.1:${port}`,
    requests,
    rooms: (): FakeLiveKitRoom[] => [...rooms.values()].map((room) => ({ ...room })),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export type FakeLiveKit = Awaited<ReturnType<typeof startFakeLiveKit>>;
