import { useQuery } from '@tanstack/react-query';
import { useKey, useWorkspace } from '../api/workspace.tsx';
import type { Option } from '../ui/form.tsx';

// The workspace's agents as choices of a select (campaigns, schedules, voice sessions, widgets),
// under the same query key as the agents page, so both share one cached list.

export function useAgentOptions(placeholder = 'Choose an agent') {
  const { api } = useWorkspace();
  const agents = useQuery({ queryKey: useKey('agents'), queryFn: async () => (await api.agents.list({ limit: 100 })).data });
  const options: Option[] = [{ value: '', label: placeholder }, ...(agents.data ?? []).map((agent) => ({ value: agent.id, label: agent.name }))];
  const nameOf = (id: string) => agents.data?.find((agent) => agent.id === id)?.name ?? id;
  return { agents, options, nameOf };
}
