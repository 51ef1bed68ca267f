import type { ColumnType, Generated } from 'kysely';

// Row types of the tables created by migration 0001. Timestamps are Date in and out.
export type Timestamp = ColumnType<Date, Date | string, Date | string>;
export type Json<T = unknown> = ColumnType<T, string | T, string | T>;

export interface UsersTable {
  id: string;
  email: string;
  name: string | null;
  password_hash: string;
  email_verified_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface SessionsTable {
  id: string;
  user_id: string;
  device: string | null;
  ip: string | null;
  created_at: Timestamp;
  last_used_at: Timestamp;
  expires_at: Timestamp;
  revoked_at: Timestamp | null;
  revoked_reason: string | null;
}

export interface RefreshTokensTable {
  token_hash: string;
  session_id: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: Timestamp | null;
}

export interface EmailTokensTable {
  token_hash: string;
  user_id: string;
  purpose: 'verify_email' | 'password_reset';
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: Timestamp | null;
}

export interface WorkspacesTable {
  id: string;
  name: string;
  /** null: the deployment's MAX_CONCURRENT_CALLS (migration 0006). */
  max_concurrent_calls: ColumnType<number | null, number | null | undefined, number | null>;
  created_by: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface MembershipsTable {
  workspace_id: string;
  user_id: string;
  role: 'owner' | 'admin' | 'member' | 'viewer';
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface InvitationsTable {
  id: string;
  workspace_id: string;
  email: string;
  role: 'owner' | 'admin' | 'member' | 'viewer';
  token_hash: string;
  invited_by: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
  accepted_at: Timestamp | null;
  accepted_by: string | null;
  revoked_at: Timestamp | null;
}

export interface ApiKeysTable {
  id: string;
  workspace_id: string;
  name: string;
  scope: 'read-only' | 'write' | 'admin';
  key_hash: string;
  prefix: string;
  last4: string;
  created_by: string | null;
  created_at: Timestamp;
  last_used_at: Timestamp | null;
  last_used_ip: string | null;
  revoked_at: Timestamp | null;
}

export interface AuditLogTable {
  id: string;
  workspace_id: string;
  actor_type: 'user' | 'api_key';
  actor_id: string;
  actor_name: string | null;
  action: string;
  method: string;
  route: string;
  resource_id: string | null;
  status_code: number;
  ip: string | null;
  user_agent: string | null;
  request_id: string | null;
  created_at: Timestamp;
}

export interface IdempotencyKeysTable {
  scope: string;
  key: string;
  request_hash: string;
  state: 'in_flight' | 'done';
  response_status: number | null;
  response_headers: Json<Record<string, string>> | null;
  response_body: string | null;
  created_at: Timestamp;
}

export interface WalletsTable {
  workspace_id: string;
  balance_micros: ColumnType<number, number | undefined, number>;
  threshold_micros: ColumnType<number, number | undefined, number>;
  currency: Generated<string>;
  auto_recharge: Json<{ enabled: boolean; amount_usd?: number; payment_method?: string }>;
  low_balance_notified_at: Timestamp | null;
  /** Auto-recharge fires once per crossing below the threshold: disarmed when it fires, armed again at the threshold. */
  recharge_armed: Generated<boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface WalletTransactionsTable {
  id: string;
  workspace_id: string;
  type: 'topup' | 'call' | 'voice_session' | 'phone_number' | 'adjustment';
  amount_micros: number;
  balance_after_micros: number;
  description: string | null;
  reference_id: string | null;
  created_at: Timestamp;
}

export interface FoundationTables {
  users: UsersTable;
  sessions: SessionsTable;
  refresh_tokens: RefreshTokensTable;
  email_tokens: EmailTokensTable;
  workspaces: WorkspacesTable;
  memberships: MembershipsTable;
  invitations: InvitationsTable;
  api_keys: ApiKeysTable;
  audit_log: AuditLogTable;
  idempotency_keys: IdempotencyKeysTable;
  wallets: WalletsTable;
  wallet_transactions: WalletTransactionsTable;
}
