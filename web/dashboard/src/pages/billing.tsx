import { useQuery } from '@tanstack/react-query';
import type { Wallet } from '@voice-agent-platform/sdk';
import { useKey, useWorkspace } from '../api/workspace.tsx';
import { usd } from '../ui/format.ts';
import { PageTitle } from '../ui/shell.tsx';
import { QueryView } from '../ui/states.tsx';
import { Ledger } from './billing-ledger.tsx';
import { WalletSettings } from './billing-settings.tsx';
import { TopUp } from './billing-topup.tsx';
import { PricingPanel, UsagePanel } from './billing-usage.tsx';

// The prepaid wallet: balance and a top-up (sandbox test cards, or a card through Stripe.js), the
// low-balance threshold and auto-recharge, usage by day, the prices, and the ledger.

function BalanceFacts({ wallet }: { wallet: Wallet }) {
  const low = wallet.balance_usd < wallet.threshold_usd;
  return (
    <>
      <p className="balance" data-testid="balance">
        {usd(wallet.balance_usd)}
      </p>
      <p className={low ? 'notice notice-warning' : 'hint'} data-testid="balance-note">
        {low ? `Below your low-balance threshold of ${usd(wallet.threshold_usd)}.` : `Low-balance threshold: ${usd(wallet.threshold_usd)}.`}
        {wallet.auto_recharge.enabled ? ` Auto-recharge adds ${usd(wallet.auto_recharge.amount_usd)} below it.` : ' Auto-recharge is off.'}
      </p>
    </>
  );
}

export function BillingPage() {
  const { api, workspace } = useWorkspace();
  const wallet = useQuery({ queryKey: useKey('wallet'), queryFn: () => api.wallet.retrieve() });
  return (
    <>
      <PageTitle>Billing</PageTitle>
      <section className="panel" aria-labelledby="balance-heading">
        <h2 id="balance-heading">Balance</h2>
        <QueryView query={wallet}>{(data) => <BalanceFacts wallet={data} />}</QueryView>
        <TopUp />
      </section>
      <div className="billing-columns">
        <UsagePanel />
        <PricingPanel />
      </div>
      <section className="panel" aria-labelledby="settings-heading">
        <h2 id="settings-heading">Balance alerts and auto-recharge</h2>
        <QueryView query={wallet}>{(data) => <WalletSettings key={workspace.id} wallet={data} />}</QueryView>
      </section>
      <Ledger />
    </>
  );
}
