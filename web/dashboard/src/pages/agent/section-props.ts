import type { AgentDraft, DraftErrors } from '../agent-draft.ts';

// What every section of the agent editor receives: the draft, its setter and the errors to show.

export type SetDraft = <K extends keyof AgentDraft>(key: K, value: AgentDraft[K]) => void;

export interface SectionProps {
  draft: AgentDraft;
  set: SetDraft;
  errors: DraftErrors;
}
