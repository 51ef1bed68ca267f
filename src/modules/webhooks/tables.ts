// Tables of the events engine (migration 0002). Filled in by the webhooks issue.
// biome-ignore lint/suspicious/noEmptyInterface: placeholder until the module declares its tables
export interface WebhookTables {}
