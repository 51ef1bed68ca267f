import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { VoiceAgent, Workspace } from '@voice-agent-platform/sdk';
import { createContext, type ReactNode, useContext, useMemo, useState } from 'react';

// The workspace the dashboard acts in (X-Workspace-Id): the one chosen last on this browser, else
// the user's first. Every query key starts with its id, so switching never shows another
// workspace's rows.

const WORKSPACE_KEY = 'vap.workspace';

export interface WorkspaceScope {
  /** The SDK client acting in the workspace. */
  api: VoiceAgent;
  workspace: Workspace;
  workspaces: Workspace[];
  select(id: string): void;
}

const WorkspaceContext = createContext<WorkspaceScope | undefined>(undefined);

export function useWorkspaces(client: VoiceAgent) {
  // Oldest first: the default is the user's first workspace, as for the API without X-Workspace-Id.
  return useQuery({
    queryKey: ['workspaces'],
    queryFn: async () => (await client.workspaces.list({ limit: 100 })).data.sort((a, b) => a.created_at.localeCompare(b.created_at)),
  });
}

export function WorkspaceProvider({ client, workspaces, children }: { client: VoiceAgent; workspaces: Workspace[]; children: ReactNode }) {
  const queryClient = useQueryClient();
  const [chosen, setChosen] = useState(() => localStorage.getItem(WORKSPACE_KEY));
  const workspace = workspaces.find((w) => w.id === chosen) ?? workspaces[0];
  const scope = useMemo<WorkspaceScope>(
    () => ({
      api: client.withWorkspace(workspace.id),
      workspace,
      workspaces,
      select(id) {
        localStorage.setItem(WORKSPACE_KEY, id);
        setChosen(id);
        void queryClient.invalidateQueries();
      },
    }),
    [client, workspace, workspaces, queryClient],
  );
  return <WorkspaceContext.Provider value={scope}>{children}</WorkspaceContext.Provider>;
}

export function useWorkspace(): WorkspaceScope {
  const scope = useContext(WorkspaceContext);
  if (!scope) throw new Error('useWorkspace outside WorkspaceProvider');
  return scope;
}

/** A query key in the current workspace. */
export function useKey(...parts: unknown[]): unknown[] {
  return [useWorkspace().workspace.id, ...parts];
}
