import twilio from 'twilio';

// The Twilio REST client of this deployment: the official SDK, pointed at TWILIO_API_BASE_URL
// (https://api.twilio.com by default; a regional edge, or a local fake in tests and benchmarks).

export const TWILIO_DEFAULT_API_BASE_URL = 'https://api.twilio.com';

export interface TwilioCredentials {
  accountSid: string;
  authToken: string;
  apiBaseUrl?: string;
}

export type TwilioClient = ReturnType<typeof twilio>;

export function createTwilioClient(credentials: TwilioCredentials): TwilioClient {
  const client = twilio(credentials.accountSid, credentials.authToken, { autoRetry: true, maxRetries: 2 });
  const base = (credentials.apiBaseUrl ?? TWILIO_DEFAULT_API_BASE_URL).replace(/\/$/, '');
  // The SDK builds every REST address from its domain's base URL.
  if (base !== TWILIO_DEFAULT_API_BASE_URL) client.api.baseUrl = base;
  return client;
}
