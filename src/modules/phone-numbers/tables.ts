import type { Json, Timestamp } from '../../platform/db/foundation-tables.ts';

// Tables of phone numbers and the do-not-call list (migration 0006).

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

export interface DncNumbersTable {
  workspace_id: string;
  number: string;
  reason: string | null;
  created_at: Timestamp;
}

export interface PhoneNumberTables {
  phone_numbers: PhoneNumbersTable;
  dnc_numbers: DncNumbersTable;
}
