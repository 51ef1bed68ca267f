import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { Campaign } from '@voice-agent-platform/sdk';
import { useState } from 'react';
import { Link, useLocation } from 'wouter';
import { describeError } from '../api/errors.ts';
import { useKey, useWorkspace } from '../api/workspace.tsx';
import { ConfirmAction } from '../ui/confirm-action.tsx';
import { Button, FormError } from '../ui/form.tsx';
import { dateTime, label, usd } from '../ui/format.ts';
import { PageTitle } from '../ui/shell.tsx';
import { QueryView } from '../ui/states.tsx';
import { useAgentOptions } from './agent-options.tsx';
import { describeWindow } from './campaign-draft.ts';
import { CampaignForm } from './campaign-form.tsx';
import { ContactList, ResultsDownload, UploadContacts } from './campaign-contacts.tsx';
import { actionsFor, isLive, pauseReason, progressOf, versionOf } from './campaign-progress.ts';

// One campaign: its settings (changed while not ended), the contacts' upload, start / pause / resume / cancel, its
// progress polled while it runs (contact counts, live calls, outcomes, cost), its contacts and
// the results CSV.

function Settings({ campaign }: { campaign: Campaign }) {
  const { nameOf } = useAgentOptions();
  const [editing, setEditing] = useState(false);
  const canChange = actionsFor(campaign.status).cancel;
  const rows: [string, string][] = [
    ['Agent', nameOf(campaign.agent_id)],
    ['From number', campaign.from_number ?? 'Sandbox caller id'],
    ['Concurrency', String(campaign.concurrency)],
    ['Attempts per contact', String(campaign.max_attempts)],
    ['Between attempts', `${campaign.retry_delay_minutes} min`],
    ['Calling window', describeWindow(campaign.calling_window)],
    ['Default country', campaign.default_country ?? '—'],
    ['Started', dateTime(campaign.started_at)],
    ['Completed', dateTime(campaign.completed_at)],
  ];
  return (
    <section className="panel" aria-labelledby="settings-heading">
      <h2 id="settings-heading">Settings</h2>
      {editing && canChange ? (
        <CampaignForm campaign={campaign} onDone={() => setEditing(false)} />
      ) : (
        <>
          <dl className="facts">
            {rows.map(([name, value]) => (
              <div key={name}>
                <dt>{name}</dt>
                <dd data-field={name}>{value}</dd>
              </div>
            ))}
          </dl>
          {canChange ? (
            <Button variant="secondary" className="settings-edit" onPress={() => setEditing(true)}>
              Change settings
            </Button>
          ) : null}
        </>
      )}
    </section>
  );
}

function Controls({ campaign }: { campaign: Campaign }) {
  const { api } = useWorkspace();
  const queryClient = useQueryClient();
  const [, navigate] = useLocation();
  const [confirming, setConfirming] = useState<'cancel' | 'delete'>();
  const done = () => void queryClient.invalidateQueries();
  const start = useMutation({ mutationFn: () => api.campaigns.start(campaign.id), onSuccess: done });
  const pause = useMutation({ mutationFn: () => api.campaigns.pause(campaign.id), onSuccess: done });
  const cancel = useMutation({ mutationFn: () => api.campaigns.cancel(campaign.id), onSuccess: done });
  const remove = useMutation({
    mutationFn: () => api.campaigns.delete(campaign.id),
    onSuccess: () => {
      done();
      navigate('/campaigns');
    },
  });
  const actions = actionsFor(campaign.status);
  const error = start.error ?? pause.error;
  return (
    <div className="actions">
      {actions.start ? (
        <Button onPress={() => start.mutate()} isDisabled={campaign.stats.total === 0} isPending={start.isPending}>
          {actions.start}
        </Button>
      ) : null}
      {actions.pause ? (
        <Button variant="secondary" onPress={() => pause.mutate()} isPending={pause.isPending}>
          Pause
        </Button>
      ) : null}
      <ResultsDownload campaign={campaign} />
      {actions.cancel ? (
        <Button variant="danger" onPress={() => setConfirming('cancel')}>
          Cancel campaign
        </Button>
      ) : null}
      {actions.remove ? (
        <Button variant="danger" onPress={() => setConfirming('delete')}>
          Delete campaign
        </Button>
      ) : null}
      <FormError message={error ? describeError(error).message : undefined} />
      {confirming === 'cancel' ? <ConfirmAction title={`Cancel “${campaign.name}”?`} body="Contacts not called yet are canceled; live calls finish. It cannot be started again." confirmLabel="Cancel campaign" mutation={cancel} onClose={() => setConfirming(undefined)} /> : null}
      {confirming === 'delete' ? <ConfirmAction title={`Delete “${campaign.name}”?`} body="The campaign and its contacts are deleted; its calls are kept." confirmLabel="Delete campaign" mutation={remove} onClose={() => setConfirming(undefined)} /> : null}
    </div>
  );
}

function ProgressPanel({ campaign, live }: { campaign: Campaign; live: boolean }) {
  const { api } = useWorkspace();
  // Live calls and cost move between count changes too: polled while live, and fetched again on each change.
  const stats = useQuery({
    queryKey: useKey('campaign-stats', campaign.id, versionOf(campaign)),
    queryFn: () => api.campaigns.stats(campaign.id),
    placeholderData: keepPreviousData,
    refetchInterval: live ? 1000 : false,
  });
  const progress = progressOf(campaign.stats);
  const counts: [string, number][] = [
    ['Waiting', campaign.stats.pending],
    ['Calling', campaign.stats.in_progress],
    ['Reached', campaign.stats.completed],
    ['Failed', campaign.stats.failed],
    ['Skipped (do not call)', campaign.stats.skipped],
    ['Canceled', campaign.stats.canceled],
  ];
  return (
    <section className="panel" aria-labelledby="progress-heading">
      <h2 id="progress-heading">Progress</h2>
      {campaign.status === 'paused' ? <p role="status">{pauseReason(campaign.pause_reason)}</p> : null}
      <div className="campaign-progress">
        <progress max={100} value={progress.percent} aria-labelledby="progress-heading" aria-describedby="progress-text" />
        <span id="progress-text" data-testid="progress-text">
          {progress.done} of {progress.total} contacts done ({progress.percent}%)
        </span>
      </div>
      <dl className="facts">
        {counts.map(([name, value]) => (
          <div key={name}>
            <dt>{name}</dt>
            <dd data-field={name}>{value}</dd>
          </div>
        ))}
        {stats.data ? (
          <>
            <div>
              <dt>Calls placed / live</dt>
              <dd>
                {stats.data.calls} / {stats.data.live_calls}
              </dd>
            </div>
            <div>
              <dt>Talk time and cost</dt>
              <dd>
                {stats.data.duration_seconds} s · {usd(stats.data.cost_usd)}
              </dd>
            </div>
            <div>
              <dt>Outcomes</dt>
              <dd>{Object.entries(stats.data.outcomes).map(([status, n]) => `${label(status)}: ${n}`).join(', ') || '—'}</dd>
            </div>
          </>
        ) : null}
      </dl>
    </section>
  );
}

export function CampaignPage({ id }: { id: string }) {
  const { api } = useWorkspace();
  const campaign = useQuery({
    queryKey: useKey('campaign', id),
    queryFn: () => api.campaigns.retrieve(id),
    refetchInterval: (query) => (query.state.data && isLive(query.state.data) ? 1000 : false),
  });
  const data = campaign.data;
  return (
    <>
      <PageTitle actions={<Link href="/campaigns">All campaigns</Link>}>{data?.name ?? 'Campaign'}</PageTitle>
      <QueryView query={campaign} loadingLabel="Loading the campaign…">
        {(loaded) => (
          <div className="stack">
            <div className="campaign-head">
              <span className={`badge badge-${loaded.status}`} data-testid="campaign-status">
                {label(loaded.status)}
              </span>
              <Controls campaign={loaded} />
            </div>
            <ProgressPanel campaign={loaded} live={isLive(loaded)} />
            {actionsFor(loaded.status).upload ? <UploadContacts campaign={loaded} /> : null}
            <section className="panel" aria-labelledby="contacts-heading">
              <h2 id="contacts-heading">Contacts</h2>
              <ContactList campaign={loaded} />
            </section>
            <Settings campaign={loaded} />
          </div>
        )}
      </QueryView>
    </>
  );
}
