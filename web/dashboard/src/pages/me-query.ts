import { useQuery } from '@tanstack/react-query';
import { useWorkspace } from '../api/workspace.tsx';

// The signed-in user (GET /auth/me), shared by the profile, members and invitation pages. Not
// scoped to a workspace: the same user in every one.

export const ME_KEY = ['me'];

export function useMe() {
  const { api } = useWorkspace();
  return useQuery({ queryKey: ME_KEY, queryFn: () => api.auth.me() });
}
