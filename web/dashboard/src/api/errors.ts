import { ApiError } from '@voice-agent-platform/sdk';

// What the pages say about a failed request: the platform's own words (problem+json detail and
// the fields at fault), or a plain sentence for a lost connection.

export interface Described {
  message: string;
  /** Field path (as the API names it) → message. */
  fields: Record<string, string>;
}

export function describeError(error: unknown): Described {
  if (error instanceof ApiError) {
    const fields: Record<string, string> = {};
    for (const item of error.errors ?? []) fields[item.path] ??= item.message;
    return { message: error.detail || error.message, fields };
  }
  if (error instanceof Error && /fetch|network|connection|timed out/i.test(`${error.name} ${error.message}`)) {
    return { message: 'The platform could not be reached. Check your connection and try again.', fields: {} };
  }
  return { message: error instanceof Error ? error.message : 'Something went wrong.', fields: {} };
}
