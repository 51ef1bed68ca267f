// Stripe.js for the billing page, loaded only when a Stripe top-up starts, from the URL the
// platform names (STRIPE_JS_URL: Stripe's in production, a local fake in tests; the dashboard's
// CSP allows that origin only in Stripe mode), and the platform's payment settings.

/** GET /dashboard-config.json: how this platform takes payments. */
export interface PaymentsSetup {
  payments_provider: 'sandbox' | 'stripe';
  stripe: { publishable_key: string; js_url: string } | null;
}

export async function fetchPaymentsSetup(): Promise<PaymentsSetup> {
  const response = await fetch('/dashboard-config.json', { headers: { accept: 'application/json' } });
  if (!response.ok) throw new Error(`The dashboard settings could not be read (HTTP ${response.status}).`);
  return (await response.json()) as PaymentsSetup;
}

/** The part of Stripe.js the page uses (docs.stripe.com/js). */
export interface PaymentElement {
  mount(target: HTMLElement): void;
  destroy(): void;
}
export interface StripeElements {
  create(type: 'payment'): PaymentElement;
}
export interface StripeConfirmResult {
  paymentIntent?: { id: string; status: string };
  error?: { message?: string; code?: string };
}
export interface StripeJs {
  elements(options: { clientSecret: string }): StripeElements;
  confirmPayment(options: { elements: StripeElements; redirect: 'if_required' }): Promise<StripeConfirmResult>;
}

declare global {
  interface Window {
    Stripe?: (publishableKey: string) => StripeJs;
  }
}

const loading = new Map<string, Promise<NonNullable<Window['Stripe']>>>();

function loadScript(url: string): Promise<NonNullable<Window['Stripe']>> {
  return new Promise((resolve, reject) => {
    const script = document.createElement('script');
    script.src = url;
    script.async = true;
    script.addEventListener('load', () => (window.Stripe ? resolve(window.Stripe) : reject(new Error('Stripe.js loaded but did not start.'))));
    script.addEventListener('error', () => reject(new Error('Stripe.js could not be loaded. Check your connection and try again.')));
    document.head.append(script);
  });
}

/** Stripe.js for this publishable key; the script is added once per URL (again after a failure). */
export async function loadStripe(setup: NonNullable<PaymentsSetup['stripe']>): Promise<StripeJs> {
  let pending = loading.get(setup.js_url);
  if (!pending) {
    pending = window.Stripe ? Promise.resolve(window.Stripe) : loadScript(setup.js_url);
    loading.set(setup.js_url, pending);
    pending.catch(() => loading.delete(setup.js_url));
  }
  return (await pending)(setup.publishable_key);
}
