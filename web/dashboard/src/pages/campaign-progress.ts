import type { Campaign, CampaignStats } from '../../../../sdks/typescript/src/index.ts';

// What a campaign's page shows and offers in each state: its progress from the contact counts,
// the actions its status allows (draft → ready → running ⇄ paused → completed; canceled from any
// state not ended), and whether to keep polling. Plain functions, unit-tested on Node.

export type CampaignStatus = Campaign['status'];

export interface Progress {
  /** Contacts with nothing more to do: reached, failed, skipped or canceled. */
  done: number;
  total: number;
  /** 0..100, whole. */
  percent: number;
}

export function progressOf(stats: CampaignStats): Progress {
  const done = stats.completed + stats.failed + stats.skipped + stats.canceled;
  const percent = stats.total === 0 ? 0 : Math.floor((done / stats.total) * 100);
  return { done, total: stats.total, percent };
}

export interface CampaignActions {
  upload: boolean;
  /** 'Start' on a ready campaign, 'Resume' on a paused one; undefined when neither. */
  start: 'Start' | 'Resume' | undefined;
  pause: boolean;
  cancel: boolean;
  remove: boolean;
}

export function actionsFor(status: CampaignStatus): CampaignActions {
  const ended = status === 'completed' || status === 'canceled';
  return {
    upload: status === 'draft' || status === 'ready',
    start: status === 'ready' ? 'Start' : status === 'paused' ? 'Resume' : undefined,
    pause: status === 'running',
    cancel: !ended,
    remove: status !== 'running',
  };
}

/** Worth polling: calls are being placed, or a pause is letting live calls finish. */
export function isLive(campaign: Pick<Campaign, 'status' | 'stats'>): boolean {
  return campaign.status === 'running' || (campaign.status === 'paused' && campaign.stats.in_progress > 0);
}

/** Why a paused campaign stopped, in words. */
export function pauseReason(reason: string | null): string {
  if (reason === 'insufficient_balance') return 'Paused by the platform: the wallet ran out. Top it up, then resume.';
  return reason ? `Paused: ${reason.replaceAll('_', ' ')}.` : 'Paused: nothing more is dialed until you resume.';
}

/** Changes whenever the campaign's status or counts do: the query key part that refetches what depends on them. */
export function versionOf(campaign: Pick<Campaign, 'status' | 'stats'>): string {
  const { total, pending, in_progress, completed, failed, skipped, canceled } = campaign.stats;
  return [campaign.status, total, pending, in_progress, completed, failed, skipped, canceled].join(':');
}
