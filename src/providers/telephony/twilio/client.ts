import { createRequire } from 'node:module';
import type twilio from 'twilio';

// The Twilio REST client of this deployment: the official SDK, pointed at TWILIO_API_BASE_URL
// (https://api.twilio.com by default; a regional edge, or a local fake in tests and benchmarks).

const require = createRequire(import.meta.url);
let sdk: typeof twilio | undefined;
/**
 * The Twilio SDK, loaded on first use (a CommonJS package: `require` loads it when it is needed,
 * synchronously). It is among the slowest packages to load, and a deployment on the sandbox never
 * uses it: a static import cost every start-up its load (docs/decisions.md, "Start-up").
 */
export function twilioSdk(): typeof twilio {
  sdk ??= require('twilio') as typeof twilio;
  return sdk;
}

export const TWILIO_DEFAULT_API_BASE_URL = 'https://api.twilio.com';

export interface TwilioCredentials {
  accountSid: string;
  authToken: string;
  apiBaseUrl?: string;
}

export type TwilioClient = ReturnType<typeof twilio>;

export function createTwilioClient(credentials: TwilioCredentials): TwilioClient {
  const client = twilioSdk()(credentials.accountSid, credentials.authToken, { autoRetry: true, maxRetries: 2 });
  const base = (credentials.apiBaseUrl ?? TWILIO_DEFAULT_API_BASE_URL).replace(/\/$/, '');
  // The SDK builds every REST address from its domain's base URL.
  if (base !== TWILIO_DEFAULT_API_BASE_URL) client.api.baseUrl = base;
  return client;
}
