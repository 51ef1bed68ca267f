import type { Kysely, Transaction } from 'kysely';
import type { AgentTables } from '../../modules/agents/tables.ts';
import type { BrandingTables } from '../../modules/branding/tables.ts';
import type { CallTables } from '../../modules/calls/tables.ts';
import type { CampaignTables } from '../../modules/campaigns/tables.ts';
import type { DemoTables } from '../../modules/demo/tables.ts';
import type { DncTables } from '../../modules/dnc/tables.ts';
import type { KnowledgeBaseTables } from '../../modules/knowledge-base/tables.ts';
import type { PaymentTables } from '../../modules/payments/tables.ts';
import type { PhoneNumberTables } from '../../modules/phone-numbers/tables.ts';
import type { PublicTables } from '../../modules/public/tables.ts';
import type { ScheduleTables } from '../../modules/schedules/tables.ts';
import type { VoiceTables } from '../../modules/voice/tables.ts';
import type { WebhookTables } from '../../modules/webhooks/tables.ts';
import type { WidgetTables } from '../../modules/widgets/tables.ts';
import type { BlobTables } from '../blobs/tables.ts';
import type { FoundationTables } from './foundation-tables.ts';

// The whole database as Kysely sees it: each module declares its own tables and this file joins them.
export interface DB
  extends FoundationTables,
    WebhookTables,
    AgentTables,
    KnowledgeBaseTables,
    CallTables,
    PhoneNumberTables,
    DncTables,
    PaymentTables,
    VoiceTables,
    CampaignTables,
    ScheduleTables,
    WidgetTables,
    BrandingTables,
    PublicTables,
    DemoTables,
    BlobTables {}

export type Database = Kysely<DB>;
/** A repository method takes this so it can run inside the caller's transaction. */
export type Executor = Kysely<DB> | Transaction<DB>;
