import type { UpdateWalletBody, Wallet } from '../../../../sdks/typescript/src/index.ts';

// The billing page's logic that needs no browser: the usage chart's scale and bars, the top-up
// amount and wallet settings forms ↔ the API (with the API's own bounds), and the ledger's pages.

/** The API's bounds (POST /v1/payments/topup, PATCH /v1/wallet). */
export const TOP_UP_MIN_USD = 5;
export const TOP_UP_MAX_USD = 10_000;
export const THRESHOLD_MAX_USD = 10_000;
const PAYMENT_METHOD = /^pm_[A-Za-z0-9_]{1,200}$/;

/** A money amount typed by a person: "25", "25.50", " 1,000 " → a number, or undefined when it is not one. */
export function parseUsd(text: string): number | undefined {
  const cleaned = text.trim().replace(/^\$/, '').replaceAll(',', '');
  if (!/^\d+(\.\d{1,2})?$/.test(cleaned)) return undefined;
  return Number(cleaned);
}

/** Why a top-up amount cannot be sent, or undefined when it can. */
export function topUpAmountError(text: string): string | undefined {
  const amount = parseUsd(text);
  if (amount === undefined) return 'Enter an amount in dollars, such as 25 or 25.50.';
  if (amount < TOP_UP_MIN_USD || amount > TOP_UP_MAX_USD) return `Enter an amount from $${TOP_UP_MIN_USD} to $${TOP_UP_MAX_USD.toLocaleString('en-US')}.`;
  return undefined;
}

/** The wallet settings form: strings as typed. */
export interface SettingsDraft {
  threshold: string;
  autoRecharge: boolean;
  rechargeAmount: string;
  paymentMethod: string;
}

export function settingsDraftOf(wallet: Pick<Wallet, 'threshold_usd' | 'auto_recharge'>): SettingsDraft {
  return {
    threshold: String(wallet.threshold_usd),
    autoRecharge: wallet.auto_recharge.enabled,
    rechargeAmount: String(wallet.auto_recharge.amount_usd),
    paymentMethod: wallet.auto_recharge.payment_method ?? '',
  };
}

/** Field errors keyed by the API's paths (so the platform's own refusals land on the same fields). */
export type SettingsErrors = Partial<Record<'threshold_usd' | 'auto_recharge.amount_usd' | 'auto_recharge.payment_method', string>>;

/** The PATCH /v1/wallet body of a draft, or the errors that keep it from being sent. */
export function settingsUpdateOf(draft: SettingsDraft): { body: UpdateWalletBody } | { errors: SettingsErrors } {
  const errors: SettingsErrors = {};
  const threshold = parseUsd(draft.threshold);
  if (threshold === undefined || threshold > THRESHOLD_MAX_USD) errors.threshold_usd = `Enter an amount from $0 to $${THRESHOLD_MAX_USD.toLocaleString('en-US')}.`;
  const amount = parseUsd(draft.rechargeAmount);
  if (amount === undefined || amount < TOP_UP_MIN_USD || amount > TOP_UP_MAX_USD) {
    errors['auto_recharge.amount_usd'] = `Enter an amount from $${TOP_UP_MIN_USD} to $${TOP_UP_MAX_USD.toLocaleString('en-US')}.`;
  }
  const method = draft.paymentMethod.trim();
  if (method && !PAYMENT_METHOD.test(method)) errors['auto_recharge.payment_method'] = 'A saved payment method id starts with pm_ (for example pm_card_visa).';
  else if (!method && draft.autoRecharge) errors['auto_recharge.payment_method'] = 'Auto-recharge needs the saved payment method it charges.';
  if (Object.keys(errors).length > 0) return { errors };
  return {
    body: {
      threshold_usd: threshold as number,
      auto_recharge: { enabled: draft.autoRecharge, amount_usd: amount as number, payment_method: method || null },
    },
  };
}

/** One bar of the usage chart, in the SVG's user units. */
export interface Bar {
  date: string;
  amountUsd: number;
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface UsageChart {
  bars: Bar[];
  /** The top of the scale: a round amount at or above the highest day. */
  maxUsd: number;
  /** Gridline amounts from 0 to maxUsd, with their heights. */
  ticks: Array<{ amountUsd: number; y: number }>;
}

/** The smallest of 1, 2, 2.5 or 5 × 10ⁿ at or above `value` (1 cent at least, so an idle month still has a scale). */
export function niceCeiling(value: number): number {
  if (!(value > 0.01)) return 0.01;
  const magnitude = 10 ** Math.floor(Math.log10(value));
  const step = [1, 2, 2.5, 5, 10].find((m) => m * magnitude >= value - 1e-12) ?? 10;
  return Number((step * magnitude).toPrecision(12));
}

/** Bars of `days` across `width` × `height` (the amount axis upwards from the bottom edge). */
export function usageChart(days: Array<{ date: string; amount_usd: number }>, width: number, height: number): UsageChart {
  const maxUsd = niceCeiling(Math.max(0, ...days.map((d) => d.amount_usd)));
  const slot = days.length > 0 ? width / days.length : width;
  const gap = Math.min(2, slot * 0.2);
  const bars = days.map((day, i) => {
    // A day with spending shows at least a sliver, so it is never mistaken for an idle one.
    const h = day.amount_usd > 0 ? Math.max(1, (day.amount_usd / maxUsd) * height) : 0;
    return { date: day.date, amountUsd: day.amount_usd, x: i * slot + gap / 2, y: height - h, width: slot - gap, height: h };
  });
  const ticks = [0, 0.5, 1].map((f) => ({ amountUsd: Number((maxUsd * f).toPrecision(12)), y: height - f * height }));
  return { bars, maxUsd, ticks };
}

/** The busiest day, for the chart's text summary (undefined when nothing was spent). */
export function busiestDay(days: Array<{ date: string; amount_usd: number }>): { date: string; amount_usd: number } | undefined {
  return days.reduce<{ date: string; amount_usd: number } | undefined>((best, day) => (day.amount_usd > 0 && (!best || day.amount_usd > best.amount_usd) ? day : best), undefined);
}

/** The ledger's pages: the cursor of each page opened so far (the first page has none). */
export type PageTrail = Array<string | undefined>;

export const firstPage = (): PageTrail => [undefined];
export const currentCursor = (trail: PageTrail) => trail[trail.length - 1];
export const olderPage = (trail: PageTrail, nextCursor: string): PageTrail => [...trail, nextCursor];
export const newerPage = (trail: PageTrail): PageTrail => (trail.length > 1 ? trail.slice(0, -1) : trail);
