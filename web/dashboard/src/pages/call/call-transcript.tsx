import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { Call } from '@voice-agent-platform/sdk';
import { useKey, useWorkspace } from '../../api/workspace.tsx';
import { hasEnded } from './call-status.ts';
import { candidatesFor } from './delivery-match.ts';
import { transcriptFromEvents } from './live-transcript.ts';
import { Transcript } from './transcript.tsx';

// A call's transcript: the call's own once it has ended; while it is live, the lines of its
// call.transcript webhook events so far (polled every 2 s, which with the call's own polling
// stays within the API's 100 requests a minute; each event is opened once).

function useLiveLines(call: Call) {
  const { api } = useWorkspace();
  const queryClient = useQueryClient();
  const deliveryKey = useKey('delivery');
  const live = !hasEnded(call);
  return useQuery({
    queryKey: useKey('live-transcript', call.id),
    enabled: live,
    refetchInterval: live ? 2000 : false,
    queryFn: async () => {
      const page = await api.webhooks.listDeliveries({ event_type: 'call.transcript', limit: 100 });
      const opened = await Promise.all(
        candidatesFor(page.data, call).map((d) =>
          queryClient.fetchQuery({ queryKey: [...deliveryKey, d.id], queryFn: () => api.webhooks.retrieveDelivery(d.id), staleTime: Number.POSITIVE_INFINITY }),
        ),
      );
      return transcriptFromEvents(
        opened.map((d) => d.payload),
        call.id,
      );
    },
  });
}

export function CallTranscript({ call }: { call: Call }) {
  const lines = useLiveLines(call);
  if (hasEnded(call)) return <Transcript turns={call.transcript} />;
  return (
    <>
      <Transcript turns={lines.data ?? []} live />
      <p className="hint">
        {lines.isError ? 'The live transcript could not be read; it is shown when the call ends.' : 'Live: lines come from the call.transcript webhook events (sent when the agent or the workspace has a webhook); the full transcript is shown when the call ends.'}
      </p>
    </>
  );
}
