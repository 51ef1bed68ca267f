// A fake Stripe.js (served by the fake Stripe at `/v3/`, where Stripe serves the real one), for the
// dashboard's browser tests: `Stripe(publishableKey)` with the calls the billing page makes —
// `elements({ clientSecret }).create('payment').mount(target)`, `confirmPayment({ elements,
// redirect: 'if_required' })` and `confirmCardPayment(clientSecret, { payment_method })` — which
// confirm the PaymentIntent on the fake Stripe's API from the browser, with the publishable key
// and the client secret, as Stripe.js does. The real Payment Element is an iframe of Stripe's;
// this one is a labelled card-number field in the page. Stripe's test card numbers map to the
// fake's test payment methods. Results have Stripe.js's shape: `{ paymentIntent }` or `{ error }`.

/** Stripe's test card numbers (docs.stripe.com/testing) and the test PaymentMethod each stands for. */
export const FAKE_STRIPE_JS_CARDS: Readonly<Record<string, string>> = {
  '4242424242424242': 'pm_card_visa',
  '5555555555554444': 'pm_card_mastercard',
  '4000000000000002': 'pm_card_chargeDeclined',
  '4000000000009995': 'pm_card_chargeDeclinedInsufficientFunds',
  '4000002500003155': 'pm_card_authenticationRequired',
};

export function fakeStripeJs(apiBaseUrl: string): string {
  return `(() => {
  'use strict';
  const API = ${JSON.stringify(apiBaseUrl)};
  const CARDS = ${JSON.stringify(FAKE_STRIPE_JS_CARDS)};
  let mounted = 0;

  const intentOf = (clientSecret) => String(clientSecret).split('_secret_')[0];
  const invalid = (message) => ({ error: { type: 'validation_error', code: 'incomplete_number', message } });

  async function confirmOnApi(publishableKey, clientSecret, paymentMethod) {
    const body = new URLSearchParams({ client_secret: clientSecret, payment_method: paymentMethod });
    const response = await fetch(API + '/v1/payment_intents/' + encodeURIComponent(intentOf(clientSecret)) + '/confirm', {
      method: 'POST',
      headers: { authorization: 'Bearer ' + publishableKey, 'content-type': 'application/x-www-form-urlencoded' },
      body,
    });
    const answer = await response.json();
    if (answer.error) return { error: { ...answer.error, payment_intent: answer.error.payment_intent } };
    if (answer.status === 'requires_action') return { error: { type: 'card_error', code: 'payment_intent_authentication_failure', message: 'The fake Stripe.js cannot show 3-D Secure.' } };
    return { paymentIntent: answer };
  }

  function paymentElement() {
    let input = null;
    return {
      mount(target) {
        const host = typeof target === 'string' ? document.querySelector(target) : target;
        if (!host) throw new Error('IntegrationError: the mount target was not found');
        const id = 'fake-stripe-card-' + ++mounted;
        const label = document.createElement('label');
        label.htmlFor = id;
        label.textContent = 'Card number';
        input = document.createElement('input');
        input.id = id;
        input.name = 'cardnumber';
        input.inputMode = 'numeric';
        input.autocomplete = 'cc-number';
        host.replaceChildren(label, input);
      },
      unmount() {
        input = null;
      },
      destroy() {
        input = null;
      },
      cardNumber: () => (input ? input.value.replace(/\\D/g, '') : ''),
    };
  }

  window.Stripe = function Stripe(publishableKey) {
    if (!/^pk_/.test(String(publishableKey))) throw new Error('IntegrationError: Invalid API Key provided: ' + publishableKey);
    return {
      elements(options) {
        const clientSecret = options && options.clientSecret;
        let element = null;
        return {
          clientSecret,
          create(type) {
            if (type !== 'payment' && type !== 'card') throw new Error('IntegrationError: the fake Stripe.js has no ' + type + ' element');
            element = paymentElement();
            return element;
          },
          getElement: () => element,
        };
      },
      async confirmPayment({ elements, clientSecret, redirect }) {
        if (redirect !== 'if_required') throw new Error('IntegrationError: the fake Stripe.js never redirects: pass redirect: "if_required"');
        const element = elements && elements.getElement();
        if (!element) return invalid('Mount a Payment Element first.');
        const paymentMethod = CARDS[element.cardNumber()];
        if (!paymentMethod) return invalid('Your card number is incomplete or not a test card.');
        return confirmOnApi(publishableKey, clientSecret || elements.clientSecret, paymentMethod);
      },
      async confirmCardPayment(clientSecret, data) {
        const method = data && data.payment_method;
        const paymentMethod = typeof method === 'string' ? method : method && method.card ? CARDS[method.card.cardNumber()] : undefined;
        if (!paymentMethod) return invalid('Your card number is incomplete or not a test card.');
        return confirmOnApi(publishableKey, clientSecret, paymentMethod);
      },
    };
  };
})();
`;
}
