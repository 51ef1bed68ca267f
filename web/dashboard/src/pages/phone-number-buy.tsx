import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { AvailablePhoneNumber, SearchAvailablePhoneNumbersQuery } from '@voice-agent-platform/sdk';
import { useState } from 'react';
import { describeError } from '../api/errors.ts';
import { useKey, useWorkspace } from '../api/workspace.tsx';
import { DataTable } from '../ui/data-table.tsx';
import { Button, Field, Form, FormError } from '../ui/form.tsx';
import { usd } from '../ui/format.ts';
import { Empty, QueryView } from '../ui/states.tsx';
import { E164_EXAMPLE, e164Problem, toE164 } from './phone-number-input.ts';
import { type NumberSearchForm, type NumberSearchProblems, numberSearchOf } from './phone-number-search.ts';

// Getting a number: searched in the provider's inventory (country, area code, digits) and bought
// (its first month debited from the wallet), or imported from an account already held at the
// provider (no charge here).

function Results({ query, onBought }: { query: SearchAvailablePhoneNumbersQuery; onBought(note: string): void }) {
  const { api } = useWorkspace();
  const queryClient = useQueryClient();
  const available = useQuery({ queryKey: useKey('available-numbers', query), queryFn: () => api.phoneNumbers.searchAvailable(query) });
  const buy = useMutation({
    mutationFn: (number: string) => api.phoneNumbers.buy({ number }),
    onSuccess: (bought) => {
      void queryClient.invalidateQueries();
      onBought(`${bought.number} is yours: ${usd(bought.monthly_cost_usd)} was debited for its first month.`);
    },
  });
  return (
    <>
      <FormError message={buy.error ? describeError(buy.error).message : undefined} />
      <QueryView query={available} isEmpty={(answer) => answer.data.length === 0} empty={<Empty title="No number matches.">Try fewer digits or another area code.</Empty>} loadingLabel="Searching the provider…">
        {(answer) => (
          <DataTable caption="Numbers for sale" columns={['Number', 'Buy', 'Monthly', 'Country', 'Can']}>
            {answer.data.map((offer: AvailablePhoneNumber) => (
              <tr key={offer.number}>
                <td>{offer.number}</td>
                <td>
                  <Button onPress={() => buy.mutate(offer.number)} isPending={buy.isPending} aria-label={`Buy ${offer.number}`}>
                    Buy
                  </Button>
                </td>
                <td>{usd(offer.monthly_cost_usd)}</td>
                <td>{offer.country}</td>
                <td>{[offer.capabilities.voice ? 'voice' : '', offer.capabilities.sms ? 'SMS' : ''].filter(Boolean).join(', ')}</td>
              </tr>
            ))}
          </DataTable>
        )}
      </QueryView>
    </>
  );
}

export function BuyNumber({ onBought }: { onBought(note: string): void }) {
  const [form, setForm] = useState<NumberSearchForm>({ country: 'US', area_code: '', contains: '' });
  const [problems, setProblems] = useState<NumberSearchProblems>({});
  const [query, setQuery] = useState<SearchAvailablePhoneNumbersQuery>();
  const submit = () => {
    const checked = numberSearchOf(form);
    setProblems(checked.problems);
    if (Object.keys(checked.problems).length === 0) setQuery(checked.query);
  };
  return (
    <section className="panel" aria-labelledby="buy-heading">
      <h2 id="buy-heading">Buy a number</h2>
      <Form label="Search numbers for sale" className="form inline" onSubmit={submit}>
        <Field label="Country" name="country" value={form.country} onChange={(country) => setForm({ ...form, country })} required description="Two letters, e.g. US." error={problems.country} />
        <Field label="Area code" name="area_code" value={form.area_code} onChange={(area_code) => setForm({ ...form, area_code })} error={problems.area_code} />
        <Field label="Contains digits" name="contains" value={form.contains} onChange={(contains) => setForm({ ...form, contains })} error={problems.contains} />
        <Button type="submit">Search</Button>
      </Form>
      {query ? <Results query={query} onBought={onBought} /> : <p className="hint">Search the provider's numbers for sale; buying one debits its first month from the wallet.</p>}
    </section>
  );
}

export function ImportNumber({ onImported }: { onImported(note: string): void }) {
  const { api } = useWorkspace();
  const queryClient = useQueryClient();
  const [number, setNumber] = useState('');
  const [label, setLabel] = useState('');
  const [problem, setProblem] = useState<string>();
  const bring = useMutation({
    mutationFn: (e164: string) => api.phoneNumbers.import({ number: e164, ...(label.trim() ? { label: label.trim() } : {}) }),
    onSuccess: (imported) => {
      void queryClient.invalidateQueries();
      setNumber('');
      setLabel('');
      onImported(`${imported.number} is imported.`);
    },
  });
  const submit = () => {
    const found = e164Problem(number);
    setProblem(found);
    const e164 = toE164(number);
    if (!found && e164) bring.mutate(e164);
  };
  const failure = bring.error ? describeError(bring.error) : undefined;
  return (
    <section className="panel" aria-labelledby="import-heading">
      <h2 id="import-heading">Import a number you already have</h2>
      <Form label="Import a number" className="form inline" onSubmit={submit}>
        <Field label="Number to import" name="number" type="tel" value={number} onChange={setNumber} required description={`Held in your provider account, in international format, e.g. ${E164_EXAMPLE}. No charge here.`} error={problem ?? failure?.fields.number} />
        <Field label="Label (optional)" name="label" value={label} onChange={setLabel} error={failure?.fields.label} />
        <Button type="submit" variant="secondary" isPending={bring.isPending}>
          Import number
        </Button>
      </Form>
      <FormError message={failure && !failure.fields.number && !failure.fields.label ? failure.message : undefined} />
    </section>
  );
}
