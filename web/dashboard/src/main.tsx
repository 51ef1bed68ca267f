import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app.tsx';
import { endsSession, reportSessionEnded, SessionProvider } from './api/session.tsx';
import './styles.css';

// The dashboard's entry: the query cache (a 401 anywhere means the session is over: back to the
// login page), the session, then the routes.

const onError = (error: unknown) => {
  if (endsSession(error)) reportSessionEnded();
};
const queryClient = new QueryClient({
  queryCache: new QueryCache({ onError }),
  mutationCache: new MutationCache({ onError }),
  defaultOptions: { queries: { staleTime: 10_000, retry: 1, refetchOnWindowFocus: false } },
});

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <SessionProvider onSignOut={() => queryClient.clear()}>
        <App />
      </SessionProvider>
    </QueryClientProvider>
  </StrictMode>,
);
