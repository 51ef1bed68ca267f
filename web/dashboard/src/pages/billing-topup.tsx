import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { Payment } from '@voice-agent-platform/sdk';
import { useCallback, useEffect, useRef, useState } from 'react';
import { describeError } from '../api/errors.ts';
import { fetchPaymentsSetup, loadStripe, type PaymentsSetup, type StripeElements } from '../api/stripe-js.ts';
import { useKey, useWorkspace } from '../api/workspace.tsx';
import { Button, Field, Form, FormError, SelectField } from '../ui/form.tsx';
import { usd } from '../ui/format.ts';
import { ErrorState, Loading } from '../ui/states.tsx';
import { parseUsd, TOP_UP_MAX_USD, TOP_UP_MIN_USD, topUpAmountError } from './billing-logic.ts';

// A top-up. Sandbox: a test card, settled at once. Stripe: the platform creates the payment
// (pending, with its PaymentIntent's client secret), the customer enters a card in Stripe's
// Payment Element and confirms it with Stripe.js here, then the page follows the payment until
// Stripe's signed webhook has credited it.

const SANDBOX_CARDS = [
  { value: 'pm_card_visa', label: 'Test Visa (succeeds)' },
  { value: 'pm_card_declined', label: 'Test card that is declined' },
];

/** Reads the balance, ledger and usage again (not the payment being followed: that one polls). */
function useRefreshBilling() {
  const queryClient = useQueryClient();
  const { workspace } = useWorkspace();
  return useCallback(() => void queryClient.invalidateQueries({ predicate: (query) => query.queryKey[0] === workspace.id && query.queryKey[1] !== 'payment' }), [queryClient, workspace.id]);
}

function TopUpForm({ setup, onPending }: { setup: PaymentsSetup; onPending(payment: Payment): void }) {
  const { api } = useWorkspace();
  const refresh = useRefreshBilling();
  const [amount, setAmount] = useState('20');
  const [card, setCard] = useState('pm_card_visa');
  const [amountError, setAmountError] = useState<string>();
  const sandbox = setup.payments_provider === 'sandbox';
  const topUp = useMutation({
    mutationFn: (amount_usd: number) => api.payments.topUp(sandbox ? { amount_usd, payment_method: card } : { amount_usd }),
    onSuccess: (payment) => (payment.status === 'pending' && payment.client_secret ? onPending(payment) : refresh()),
    onError: refresh,
  });
  const submit = () => {
    const error = topUpAmountError(amount);
    setAmountError(error);
    if (!error) topUp.mutate(parseUsd(amount) as number);
  };
  const failure = topUp.error ? describeError(topUp.error) : undefined;
  const cannotTakeCards = !sandbox && !setup.stripe;
  return (
    <Form label="Top up" className="form inline" onSubmit={submit}>
      <Field
        label="Amount (USD)"
        name="amount_usd"
        type="number"
        min={TOP_UP_MIN_USD}
        max={TOP_UP_MAX_USD}
        step="any"
        value={amount}
        onChange={setAmount}
        required
        error={amountError ?? failure?.fields.amount_usd}
        description={`From $${TOP_UP_MIN_USD} to $${TOP_UP_MAX_USD.toLocaleString('en-US')}.`}
      />
      {sandbox ? <SelectField label="Test card" name="payment_method" value={card} onChange={setCard} options={SANDBOX_CARDS} description="Sandbox mode: no money moves." /> : null}
      <Button type="submit" isDisabled={cannotTakeCards} isPending={topUp.isPending}>
        Top up
      </Button>
      <span role="status" className="hint">
        {topUp.data && topUp.data.status !== 'pending' ? `Payment ${topUp.data.status}: ${usd(topUp.data.amount_usd)}` : ''}
      </span>
      {cannotTakeCards ? <p className="hint">Card payments are not set up on this platform: its operator has to set STRIPE_PUBLISHABLE_KEY.</p> : null}
      <FormError message={failure && !failure.fields.amount_usd ? failure.message : undefined} />
    </Form>
  );
}

/** Stripe's Payment Element for the payment's client secret, mounted in the page. */
function usePaymentElement(setup: NonNullable<PaymentsSetup['stripe']>, clientSecret: string) {
  const host = useRef<HTMLDivElement>(null);
  const [elements, setElements] = useState<StripeElements>();
  const stripe = useQuery({ queryKey: ['stripe-js', setup.js_url, setup.publishable_key], queryFn: () => loadStripe(setup), staleTime: Number.POSITIVE_INFINITY, retry: false });
  useEffect(() => {
    if (!stripe.data || !host.current) return;
    const created = stripe.data.elements({ clientSecret });
    const element = created.create('payment');
    element.mount(host.current);
    setElements(created);
    return () => element.destroy();
  }, [stripe.data, clientSecret]);
  return { host, stripe, elements };
}

function StripeCheckout({ setup, payment, onClose }: { setup: NonNullable<PaymentsSetup['stripe']>; payment: Payment; onClose(): void }) {
  const { api } = useWorkspace();
  const refresh = useRefreshBilling();
  const { host, stripe, elements } = usePaymentElement(setup, payment.client_secret as string);
  const confirm = useMutation({
    mutationFn: async () => {
      const result = await (stripe.data as NonNullable<typeof stripe.data>).confirmPayment({ elements: elements as StripeElements, redirect: 'if_required' });
      if (result.error) throw new Error(result.error.message ?? 'The card was not accepted.');
      return result;
    },
  });
  // Confirmed in the browser; credited only once Stripe's webhook reached the platform.
  const settled = useQuery({
    queryKey: useKey('payment', payment.id),
    queryFn: () => api.payments.retrieve(payment.id),
    enabled: confirm.isSuccess,
    refetchInterval: (query) => (query.state.data?.status === 'pending' ? 1000 : false),
  });
  const status = settled.data?.status;
  useEffect(() => {
    if (status && status !== 'pending') refresh();
  }, [status, refresh]);
  const note = !confirm.isSuccess ? '' : status === 'succeeded' ? `Payment succeeded: ${usd(payment.amount_usd)}` : status === 'failed' ? `Payment failed: ${settled.data?.failure_reason ?? ''}` : 'Card accepted. Waiting for Stripe to confirm the payment…';
  return (
    <section className="checkout" aria-labelledby="checkout-heading">
      <h3 id="checkout-heading">Pay {usd(payment.amount_usd)} by card</h3>
      {stripe.isPending ? <Loading label="Loading Stripe…" /> : null}
      {stripe.isError ? <ErrorState error={stripe.error} retry={() => void stripe.refetch()} /> : null}
      <div ref={host} className="payment-element" />
      <div className="actions">
        {confirm.isSuccess ? null : (
          <Button onPress={() => confirm.mutate()} isDisabled={!elements} isPending={confirm.isPending}>
            {confirm.isPending ? 'Paying…' : `Pay ${usd(payment.amount_usd)}`}
          </Button>
        )}
        <Button variant="secondary" onPress={onClose}>
          {status && status !== 'pending' ? 'Done' : 'Cancel'}
        </Button>
      </div>
      <p role="status" className="hint">
        {note}
      </p>
      <FormError message={confirm.error ? describeError(confirm.error).message : undefined} />
    </section>
  );
}

export function TopUp() {
  const setup = useQuery({ queryKey: ['payments-setup'], queryFn: fetchPaymentsSetup, staleTime: Number.POSITIVE_INFINITY });
  const [pending, setPending] = useState<Payment>();
  if (setup.isPending) return <Loading label="Loading payment options…" />;
  if (setup.isError) return <ErrorState error={setup.error} retry={() => void setup.refetch()} />;
  if (pending && setup.data.stripe) return <StripeCheckout setup={setup.data.stripe} payment={pending} onClose={() => setPending(undefined)} />;
  return <TopUpForm setup={setup.data} onPending={setPending} />;
}
