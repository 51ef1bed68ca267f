import type { Json, Timestamp } from '../../platform/db/foundation-tables.ts';

// The table of phone numbers (migration 0006; the do-not-call list of the same migration is dnc's).

export interface PhoneNumberCapabilities {
  voice: boolean;
  sms: boolean;
}

export interface PhoneNumbersTable {
  id: string;
  workspace_id: string;
  /** E.164; unique across workspaces. */
  number: string;
  /** ISO 3166-1 alpha-2. */
  country: string;
  /** `sandbox` or `twilio`. */
  provider: string;
  /** The provider's id of the number (Twilio's PN… sid). */
  provider_number_id: string | null;
  capabilities: Json<PhoneNumberCapabilities>;
  agent_id: string | null;
  label: string | null;
  monthly_cost_micros: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface PhoneNumberTables {
  phone_numbers: PhoneNumbersTable;
}
