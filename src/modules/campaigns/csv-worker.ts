import { type ParsedUpload, parseContactsCsv } from './contacts-csv.ts';

// The upload's parsing as a task of the app's CPU pool (platform/cpu-pool.ts): 100,000 rows
// through csv-parse and libphonenumber-js take seconds, which on the main thread would stall every
// request of the process. Failures come back as values.

export function parseUpload(input: { bytes: Uint8Array; defaultCountry: string | null }): Promise<ParsedUpload> {
  return parseContactsCsv(input.bytes, input.defaultCountry);
}
