// How numbers and times read on the pages.

export const usd = (amount: number) => new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 4 }).format(amount);

export const dateTime = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');

/** 83 450 → "1:23.4" (minutes:seconds.tenths) */
export function clock(ms: number): string {
  const tenths = Math.floor(ms / 100);
  const minutes = Math.floor(tenths / 600);
  const seconds = ((tenths % 600) / 10).toFixed(1).padStart(4, '0');
  return `${minutes}:${seconds}`;
}

export const label = (code: string) => code.replaceAll('_', ' ');
