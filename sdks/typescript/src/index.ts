// @voice-agent-platform/sdk: the official TypeScript client of the Voice Agent Platform API.
export { VoiceAgent } from './client.js';
export type { Credentials, Tokens } from './core/auth.js';
export type { ClientOptions, RequestOptions } from './core/core.js';
export { Download } from './core/download.js';
export * from './core/errors.js';
export { type Page, PageIterator } from './core/pagination.js';
export { type FileContent, type FileUpload, toFile, type Uploadable } from './core/uploads.js';
export type * from './generated/models.js';
export { OPERATIONS } from './generated/operations.js';
export { TERMINAL_CALL_STATUSES, type WaitOptions } from './resources/calls.js';
export type { VoiceSessionCreated, WebSocketConstructor, WebSocketLike } from './resources/voice-sessions.js';
export { VERSION } from './version.js';
export { type HeaderSource, type VerifyOptions, verifyWebhook } from './webhooks.js';
import { VoiceAgent as Client } from './client.js';
export default Client;
