import { ApiError, VoiceAgent } from '@voice-agent-platform/sdk';
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useState } from 'react';
import { browserLock, guardRefresh, type StoredTokens, type TokenStore } from './refresh-guard.ts';
import { clearRotationLog, indexedDbRotationLog } from './rotation-log.ts';

// The signed-in user's session: tokens in localStorage (shared by the tabs; the platform's CSP
// allows no script but the dashboard's own), one SDK client made from them, and sign-out when
// the platform refuses the session (a refresh that failed) or another tab signs out.

const TOKENS_KEY = 'vap.tokens';
/** The page a signed-out visitor asked for, opened after the login. */
export const NEXT_KEY = 'vap.next';

export const tokenStore: TokenStore = {
  read() {
    try {
      const raw = localStorage.getItem(TOKENS_KEY);
      return raw ? (JSON.parse(raw) as StoredTokens) : undefined;
    } catch {
      return undefined;
    }
  },
  write: (tokens) => localStorage.setItem(TOKENS_KEY, JSON.stringify(tokens)),
  clear: () => localStorage.removeItem(TOKENS_KEY),
};

const sharedFetch = guardRefresh((input, init) => fetch(input, init), tokenStore, indexedDbRotationLog, browserLock(navigator.locks));

/** An SDK client on this origin; with tokens it acts for that login (and refreshes it). */
export function makeClient(tokens?: StoredTokens): VoiceAgent {
  return new VoiceAgent({
    baseURL: location.origin,
    accessToken: tokens?.accessToken,
    refreshToken: tokens?.refreshToken,
    onTokens: (fresh) => tokenStore.write(fresh),
    fetch: sharedFetch,
    maxRetries: 1,
    timeout: 30_000,
  });
}

/** The session ended on the server: the refresh token no longer works. */
export function endsSession(error: unknown): boolean {
  return error instanceof ApiError && error.status === 401;
}

const sessionEnded = new EventTarget();
/** Called by the query cache when a request finds the session over. */
export const reportSessionEnded = () => sessionEnded.dispatchEvent(new Event('ended'));

interface Session {
  client: VoiceAgent | undefined;
  signIn(client: VoiceAgent): void;
  signOut(): Promise<void>;
}

const SessionContext = createContext<Session | undefined>(undefined);

export function SessionProvider({ children, onSignOut }: { children: ReactNode; onSignOut: () => void }) {
  const [client, setClient] = useState<VoiceAgent | undefined>(() => {
    const tokens = tokenStore.read();
    return tokens ? makeClient(tokens) : undefined;
  });
  const forget = useCallback(() => {
    tokenStore.clear();
    void clearRotationLog();
    setClient(undefined);
    onSignOut();
  }, [onSignOut]);
  useEffect(() => {
    const ended = () => forget();
    // Another tab signed out (or in as someone else): follow it.
    const storage = (event: StorageEvent) => {
      if (event.key !== TOKENS_KEY && event.key !== null) return;
      const tokens = tokenStore.read();
      if (!tokens) forget();
    };
    sessionEnded.addEventListener('ended', ended);
    window.addEventListener('storage', storage);
    return () => {
      sessionEnded.removeEventListener('ended', ended);
      window.removeEventListener('storage', storage);
    };
  }, [forget]);
  const session = useMemo<Session>(
    () => ({
      client,
      signIn: setClient,
      signOut: async () => {
        await client?.auth.logout().catch(() => undefined);
        forget();
      },
    }),
    [client, forget],
  );
  return <SessionContext.Provider value={session}>{children}</SessionContext.Provider>;
}

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside SessionProvider');
  return session;
}
