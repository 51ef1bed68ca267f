import type { Migration } from 'kysely';
import * as foundation from './0001_foundation.ts';
import * as webhooks from './0002_webhooks.ts';
import * as agents from './0003_agents.ts';
import * as knowledgeBase from './0004_knowledge_base.ts';
import * as auditLogOutlivesWorkspace from './0005_audit_log_outlives_workspace.ts';
import * as calls from './0006_calls.ts';
import * as twilio from './0007_twilio.ts';
import * as payments from './0008_payments.ts';
import * as voiceSessions from './0009_voice_sessions.ts';
import * as campaigns from './0010_campaigns.ts';
import * as schedules from './0011_schedules.ts';
import * as widgets from './0012_widgets.ts';
import * as publicUtilities from './0013_public.ts';
import * as postCall from './0014_post_call.ts';
import * as liveElapsed from './0015_live_elapsed.ts';

// One migration set for PGlite and PostgreSQL, applied in name order at start-up.
// Never edit a migration that has shipped: add the next number.
export const migrations: Record<string, Migration> = {
  '0001_foundation': foundation,
  '0002_webhooks': webhooks,
  '0003_agents': agents,
  '0004_knowledge_base': knowledgeBase,
  '0005_audit_log_outlives_workspace': auditLogOutlivesWorkspace,
  '0006_calls': calls,
  '0007_twilio': twilio,
  '0008_payments': payments,
  '0009_voice_sessions': voiceSessions,
  '0010_campaigns': campaigns,
  '0011_schedules': schedules,
  '0012_widgets': widgets,
  '0013_public': publicUtilities,
  '0014_post_call': postCall,
  '0015_live_elapsed': liveElapsed,
};
