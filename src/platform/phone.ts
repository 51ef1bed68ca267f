import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js';

// Phone numbers everywhere are E.164, normalised with libphonenumber-js and accepted when
// *possible* (length fits the country), not only when assigned in the numbering plan, so the
// sandbox's +1555… numbers pass (DESIGN part 6).

/** The E.164 form of `raw`, or null when it is not a possible number. */
export function toE164(raw: string, defaultCountry?: CountryCode): string | null {
  const parsed = parsePhoneNumberFromString(raw.trim(), defaultCountry);
  if (!parsed?.isPossible()) return null;
  return parsed.number;
}

/** The ISO country of an E.164 number (null when libphonenumber cannot tell, e.g. +1555 fictional numbers: 'US'). */
export function countryOf(e164: string): string | null {
  const parsed = parsePhoneNumberFromString(e164);
  return parsed?.country ?? (parsed?.countryCallingCode === '1' ? 'US' : null);
}
