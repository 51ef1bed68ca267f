import { keepPreviousData, useQuery } from '@tanstack/react-query';
import type { WalletTransaction } from '@voice-agent-platform/sdk';
import { useState } from 'react';
import { useKey, useWorkspace } from '../api/workspace.tsx';
import { Button } from '../ui/form.tsx';
import { dateTime, label, usd } from '../ui/format.ts';
import { Empty, QueryView } from '../ui/states.tsx';
import { currentCursor, firstPage, newerPage, olderPage } from './billing-logic.ts';

// The ledger, newest first, a page at a time (the API's cursor; the cursors of the pages opened
// so far are kept to step back).

export const LEDGER_PAGE_SIZE = 20;

function LedgerTable({ rows }: { rows: WalletTransaction[] }) {
  return (
    <div className="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Type</th>
            <th scope="col">Description</th>
            <th scope="col">Amount</th>
            <th scope="col">Balance after</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((t) => (
            <tr key={t.id}>
              <td>{dateTime(t.created_at)}</td>
              <td>{label(t.type)}</td>
              <td>{t.description ?? '—'}</td>
              <td className={t.amount_usd < 0 ? 'debit' : 'credit'}>{usd(t.amount_usd)}</td>
              <td>{usd(t.balance_after_usd)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function Ledger() {
  const { api } = useWorkspace();
  const [trail, setTrail] = useState(firstPage);
  const cursor = currentCursor(trail);
  const ledger = useQuery({
    queryKey: useKey('ledger', cursor ?? null),
    queryFn: async () => await api.wallet.transactions({ limit: LEDGER_PAGE_SIZE, ...(cursor ? { cursor } : {}) }),
    placeholderData: keepPreviousData,
  });
  return (
    <section className="panel" aria-labelledby="ledger-heading">
      <h2 id="ledger-heading">Ledger</h2>
      <QueryView query={ledger} isEmpty={(page) => page.data.length === 0 && trail.length === 1} empty={<Empty title="No transactions yet." />}>
        {(page) => (
          <>
            <LedgerTable rows={page.data} />
            <nav className="pager" aria-label="Ledger pages">
              <Button variant="secondary" onPress={() => setTrail(newerPage(trail))} isDisabled={trail.length === 1} isPending={ledger.isFetching}>
                Newer
              </Button>
              <span className="hint" aria-live="polite">
                Page {trail.length}
              </span>
              <Button variant="secondary" onPress={() => page.next_cursor && setTrail(olderPage(trail, page.next_cursor))} isDisabled={!page.has_more || !page.next_cursor} isPending={ledger.isFetching}>
                Older
              </Button>
            </nav>
          </>
        )}
      </QueryView>
    </section>
  );
}
