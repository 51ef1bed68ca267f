// The phone numbers module's port to a telephony provider's number inventory (sandbox now,
// Twilio's AvailablePhoneNumbers / IncomingPhoneNumbers with the Twilio issue).

export interface AvailableNumber {
  number: string;
  country: string;
  capabilities: { voice: boolean; sms: boolean };
}

export interface ProvisionedNumber {
  providerNumberId: string;
  country: string;
  capabilities: { voice: boolean; sms: boolean };
}

export interface NumberInventory {
  readonly provider: string;
  search(query: { country: string; areaCode?: string; contains?: string; limit: number; exclude: Set<string> }): Promise<AvailableNumber[]>;
  /** Buys a number of the inventory; null when it is not for sale. */
  buy(number: string): Promise<ProvisionedNumber | null>;
  /** A number the user already holds at the provider (import); null when the provider does not know it. */
  lookup(number: string): Promise<ProvisionedNumber | null>;
  release(providerNumberId: string): Promise<void>;
}
