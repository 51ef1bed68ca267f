import type { AvailableNumber, NumberInventory } from '../../ports/number-inventory.ts';

// The sandbox's numbers for sale: a fixed, generated inventory of fictional +1 555 01xx xxxx
// numbers (US), so searches are stable and a bought number can be called in the sandbox.

const EXCHANGES = ['0142', '0143', '0144', '0145', '0146', '0147', '0148', '0149'];

function inventory(): string[] {
  const numbers: string[] = [];
  for (const exchange of EXCHANGES) {
    for (let line = 0; line < 1000; line += 7) numbers.push(`+1555${exchange}${String(line).padStart(3, '0')}`);
  }
  return numbers;
}

export function createSandboxInventory(): NumberInventory {
  const all = inventory();
  const forSale = new Set(all);
  return {
    provider: 'sandbox',
    async search({ country, areaCode, contains, limit, exclude }): Promise<AvailableNumber[]> {
      if (country !== 'US') return [];
      if (areaCode && areaCode !== '555') return [];
      const digits = contains?.replace(/\D/g, '');
      const found: AvailableNumber[] = [];
      for (const number of all) {
        if (found.length >= limit) break;
        if (exclude.has(number)) continue;
        if (digits && !number.slice(1).includes(digits)) continue;
        found.push({ number, country: 'US', capabilities: { voice: true, sms: true } });
      }
      return found;
    },
    async buy(number) {
      if (!forSale.has(number)) return null;
      return { providerNumberId: `sandbox-${number.slice(1)}`, country: 'US', capabilities: { voice: true, sms: true } };
    },
    async lookup(number) {
      // Any possible number may be brought to the sandbox (it simulates every line).
      return { providerNumberId: `sandbox-import-${number.slice(1)}`, country: number.startsWith('+1') ? 'US' : 'ZZ', capabilities: { voice: true, sms: false } };
    },
    async release() {
      // Back into the inventory: nothing to do for a simulated provider.
    },
  };
}
