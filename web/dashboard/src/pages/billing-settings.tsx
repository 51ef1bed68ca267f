import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { Wallet } from '@voice-agent-platform/sdk';
import { useState } from 'react';
import { describeError } from '../api/errors.ts';
import { useKey, useWorkspace } from '../api/workspace.tsx';
import { Button, CheckboxField, Field, Form, FormError } from '../ui/form.tsx';
import { type SettingsDraft, type SettingsErrors, settingsDraftOf, settingsUpdateOf } from './billing-logic.ts';

// The low-balance threshold (below it the workspace's webhook gets wallet.low_balance, at most
// once a day) and auto-recharge (below it, the saved payment method is charged off session).

const SETTINGS_FIELDS = ['threshold_usd', 'auto_recharge.amount_usd', 'auto_recharge.payment_method'] as const;

export function WalletSettings({ wallet }: { wallet: Wallet }) {
  const { api } = useWorkspace();
  const queryClient = useQueryClient();
  const walletKey = useKey('wallet');
  const [draft, setDraft] = useState<SettingsDraft>(() => settingsDraftOf(wallet));
  const [errors, setErrors] = useState<SettingsErrors>({});
  const save = useMutation({
    mutationFn: (body: Parameters<typeof api.wallet.update>[0]) => api.wallet.update(body),
    onSuccess: (saved) => {
      queryClient.setQueryData(walletKey, saved);
      setDraft(settingsDraftOf(saved));
    },
  });
  const submit = () => {
    const update = settingsUpdateOf(draft);
    if ('errors' in update) {
      setErrors(update.errors);
      return;
    }
    setErrors({});
    save.mutate(update.body);
  };
  const failure = save.error ? describeError(save.error) : undefined;
  const fieldError = (path: keyof SettingsErrors) => errors[path] ?? failure?.fields[path];
  const set = (patch: Partial<SettingsDraft>) => {
    setDraft({ ...draft, ...patch });
    save.reset();
  };
  return (
    <Form label="Balance alerts and auto-recharge" onSubmit={submit}>
      <Field
        label="Low-balance threshold (USD)"
        name="threshold_usd"
        type="number"
        min={0}
        step="any"
        value={draft.threshold}
        onChange={(threshold) => set({ threshold })}
        error={fieldError('threshold_usd')}
        description="Below it your workspace webhook gets wallet.low_balance (at most once a day), and auto-recharge tops up."
      />
      <fieldset>
        <legend>Auto-recharge</legend>
        <CheckboxField label="Top up automatically when the balance falls below the threshold" name="auto_recharge_enabled" checked={draft.autoRecharge} onChange={(autoRecharge) => set({ autoRecharge })} />
        <Field label="Each recharge adds (USD)" name="recharge_amount_usd" type="number" min={5} step="any" value={draft.rechargeAmount} onChange={(rechargeAmount) => set({ rechargeAmount })} error={fieldError('auto_recharge.amount_usd')} />
        <Field
          label="Saved payment method"
          name="payment_method"
          value={draft.paymentMethod}
          onChange={(paymentMethod) => set({ paymentMethod })}
          error={fieldError('auto_recharge.payment_method')}
          description="The id of the card charged off session (pm_…; sandbox: pm_card_visa)."
        />
      </fieldset>
      <div className="actions">
        <Button type="submit" isPending={save.isPending}>
          Save settings
        </Button>
        <span role="status" className="hint">
          {save.isSuccess ? 'Settings saved' : ''}
        </span>
      </div>
      <FormError message={failure && !SETTINGS_FIELDS.some((path) => failure.fields[path]) ? failure.message : undefined} />
    </Form>
  );
}
