// Tables of knowledge bases (migration 0004). Filled in by the knowledge base issue.
// biome-ignore lint/suspicious/noEmptyInterface: placeholder until the module declares its tables
export interface KnowledgeBaseTables {}
