// Tables of agents (migration 0003). Filled in by the agents issue.
// biome-ignore lint/suspicious/noEmptyInterface: placeholder until the module declares its tables
export interface AgentTables {}
