import { usdToMicros } from '../../platform/money.ts';
import type { Platform } from '../../platform/platform.ts';
import { phoneNumbersRoutes } from './routes.ts';
import { createPhoneNumbersService } from './service.ts';

// The phone numbers module: numbers bought through the number inventory port, and their agents.

export function createPhoneNumbersModule(platform: Platform) {
  const service = createPhoneNumbersService({
    db: platform.db,
    clock: platform.clock,
    inventory: platform.providers.numbers,
    events: platform.events,
    monthlyMicros: usdToMicros(platform.config.pricing.phoneNumberMonthlyUsd),
  });
  return { routes: phoneNumbersRoutes(service), service };
}
