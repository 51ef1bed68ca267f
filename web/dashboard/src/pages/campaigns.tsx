import { useQuery } from '@tanstack/react-query';
import { Link } from 'wouter';
import { useKey, useWorkspace } from '../api/workspace.tsx';
import { DataTable } from '../ui/data-table.tsx';
import { dateTime, label } from '../ui/format.ts';
import { PageTitle } from '../ui/shell.tsx';
import { Empty, QueryView } from '../ui/states.tsx';
import { useAgentOptions } from './agent-options.tsx';
import { CampaignForm } from './campaign-form.tsx';
import { isLive, progressOf } from './campaign-progress.ts';

// The workspace's campaigns (newest first, followed while one runs), and the page of a new one.

export function CampaignsPage() {
  const { api } = useWorkspace();
  const { nameOf } = useAgentOptions();
  const campaigns = useQuery({
    queryKey: useKey('campaigns'),
    queryFn: async () => (await api.campaigns.list({ limit: 100 })).data,
    refetchInterval: (query) => (query.state.data?.some(isLive) ? 2000 : false),
  });
  return (
    <>
      <PageTitle actions={<Link href="/campaigns/new" className="btn btn-primary">New campaign</Link>}>Campaigns</PageTitle>
      <QueryView query={campaigns} isEmpty={(list) => list.length === 0} empty={<Empty title="No campaigns yet.">A campaign calls a list of contacts uploaded as CSV. <Link href="/campaigns/new">Create one</Link>.</Empty>}>
        {(list) => (
          <DataTable caption="Campaigns" columns={['Name', 'Status', 'Done', 'Agent', 'Created']}>
            {list.map((campaign) => {
              const progress = progressOf(campaign.stats);
              return (
                <tr key={campaign.id}>
                  <td>
                    <Link href={`/campaigns/${campaign.id}`}>{campaign.name}</Link>
                  </td>
                  <td>
                    <span className={`badge badge-${campaign.status}`}>{label(campaign.status)}</span>
                  </td>
                  <td>
                    {progress.done} / {progress.total}
                  </td>
                  <td>{nameOf(campaign.agent_id)}</td>
                  <td>{dateTime(campaign.created_at)}</td>
                </tr>
              );
            })}
          </DataTable>
        )}
      </QueryView>
    </>
  );
}

export function NewCampaignPage() {
  return (
    <>
      <PageTitle actions={<Link href="/campaigns">All campaigns</Link>}>New campaign</PageTitle>
      <CampaignForm />
    </>
  );
}
