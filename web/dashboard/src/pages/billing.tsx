import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { describeError } from '../api/errors.ts';
import { useKey, useWorkspace } from '../api/workspace.tsx';
import { Button, Field, Form, FormError } from '../ui/form.tsx';
import { dateTime, label, usd } from '../ui/format.ts';
import { PageTitle } from '../ui/shell.tsx';
import { Empty, QueryView } from '../ui/states.tsx';

// The prepaid wallet: balance, a top-up (sandbox mode: the test card), and the ledger.

function TopUp() {
  const { api } = useWorkspace();
  const queryClient = useQueryClient();
  const [amount, setAmount] = useState('20');
  const topUp = useMutation({ mutationFn: () => api.payments.topUp({ amount_usd: Number(amount) }), onSuccess: () => void queryClient.invalidateQueries() });
  const failure = topUp.error ? describeError(topUp.error) : undefined;
  return (
    <Form label="Top up" className="form inline" onSubmit={() => topUp.mutate()}>
      <Field label="Amount (USD)" name="amount_usd" type="number" min={1} step="any" value={amount} onChange={setAmount} required error={failure?.fields.amount_usd} />
      <Button type="submit" isDisabled={topUp.isPending}>
        Top up
      </Button>
      <span role="status" className="hint">
        {topUp.data ? `Payment ${topUp.data.status}: ${usd(topUp.data.amount_usd)}` : ''}
      </span>
      <FormError message={failure && !failure.fields.amount_usd ? failure.message : undefined} />
    </Form>
  );
}

export function BillingPage() {
  const { api } = useWorkspace();
  const wallet = useQuery({ queryKey: useKey('wallet'), queryFn: () => api.wallet.retrieve() });
  const ledger = useQuery({ queryKey: useKey('ledger'), queryFn: async () => (await api.wallet.transactions({ limit: 50 })).data });
  return (
    <>
      <PageTitle>Billing</PageTitle>
      <section className="panel" aria-labelledby="balance-heading">
        <h2 id="balance-heading">Balance</h2>
        <QueryView query={wallet}>
          {(data) => (
            <p className="balance" data-testid="balance">
              {usd(data.balance_usd)}
            </p>
          )}
        </QueryView>
        <TopUp />
      </section>
      <section className="panel" aria-labelledby="ledger-heading">
        <h2 id="ledger-heading">Ledger</h2>
        <QueryView query={ledger} isEmpty={(rows) => rows.length === 0} empty={<Empty title="No transactions yet." />}>
          {(rows) => (
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
                      <td>{usd(t.amount_usd)}</td>
                      <td>{usd(t.balance_after_usd)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </QueryView>
      </section>
    </>
  );
}
