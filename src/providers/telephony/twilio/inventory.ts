import type { AvailableNumber, NumberInventory, ProvisionedNumber } from '../../../ports/number-inventory.ts';
import type { TwilioClient } from './client.ts';

// Phone numbers through Twilio: searched in AvailablePhoneNumbers (local numbers), bought and
// imported as IncomingPhoneNumbers pointed at this deployment's voice webhook, released by
// deleting them. A number Twilio holds keeps calling us until it is released.

export interface TwilioInventoryDeps {
  client: TwilioClient;
  /** The voice webhook inbound calls to our numbers reach (PUBLIC_BASE_URL + /v1/telephony/twilio/voice). */
  voiceUrl: string;
  statusUrl: string;
}

/** Marks the provider id of a number imported from the user's own Twilio account. */
const IMPORTED = 'imported:';

type Capabilities = { voice?: boolean; sms?: boolean; SMS?: boolean } | undefined;

const capabilitiesOf = (raw: Capabilities) => ({ voice: raw?.voice === true, sms: raw?.sms === true || raw?.SMS === true });

export function createTwilioInventory(deps: TwilioInventoryDeps): NumberInventory {
  const { client } = deps;
  const webhooks = { voiceUrl: deps.voiceUrl, voiceMethod: 'POST', statusCallback: deps.statusUrl, statusCallbackMethod: 'POST' } as const;

  const provisioned = (sid: string, number: string, capabilities: Capabilities): ProvisionedNumber => ({
    providerNumberId: sid,
    country: number.startsWith('+1') ? 'US' : 'ZZ',
    capabilities: capabilitiesOf(capabilities),
  });

  return {
    provider: 'twilio',
    async search({ country, areaCode, contains, limit, exclude }): Promise<AvailableNumber[]> {
      const found = await client.availablePhoneNumbers(country).local.list({
        areaCode: areaCode ? Number(areaCode) : undefined,
        contains: contains || undefined,
        voiceEnabled: true,
        limit: Math.min(limit + exclude.size, 100),
      });
      return found
        .filter((n) => !exclude.has(n.phoneNumber))
        .slice(0, limit)
        .map((n) => ({ number: n.phoneNumber, country: n.isoCountry ?? country, capabilities: capabilitiesOf(n.capabilities as Capabilities) }));
    },
    async buy(number) {
      try {
        const bought = await client.incomingPhoneNumbers.create({ phoneNumber: number, ...webhooks });
        return { ...provisioned(bought.sid, bought.phoneNumber, bought.capabilities as Capabilities) };
      } catch (error) {
        // 21422: the number is not available (any more); 21421: not a valid number.
        const code = (error as { code?: number }).code;
        if (code === 21422 || code === 21421) return null;
        throw error;
      }
    },
    async lookup(number) {
      const [held] = await client.incomingPhoneNumbers.list({ phoneNumber: number, limit: 1 });
      if (!held) return null;
      // An imported number now rings this deployment.
      await client.incomingPhoneNumbers(held.sid).update(webhooks);
      return provisioned(`${IMPORTED}${held.sid}`, held.phoneNumber, held.capabilities as Capabilities);
    },
    async release(providerNumberId) {
      // A number bought here goes back to Twilio; one the user brought stays theirs, unhooked from us.
      if (providerNumberId.startsWith(IMPORTED)) {
        await client.incomingPhoneNumbers(providerNumberId.slice(IMPORTED.length)).update({ voiceUrl: '', statusCallback: '' });
      } else {
        await client.incomingPhoneNumbers(providerNumberId).remove();
      }
    },
  };
}
