import { usdToMicros } from '../../platform/money.ts';
import type { Platform } from '../../platform/platform.ts';
import { phoneNumbersRoutes } from './routes.ts';
import { createPhoneNumbersService } from './service.ts';

// The phone numbers module: numbers bought through the number inventory port, and their agents.

/** `hasLiveCallOn`: the calls module's read (a number is not released under a live call). */
export function createPhoneNumbersModule(platform: Platform, deps: { hasLiveCallOn(workspaceId: string, number: string): Promise<boolean> }) {
  const service = createPhoneNumbersService({
    db: platform.db,
    clock: platform.clock,
    inventory: platform.providers.numbers,
    events: platform.events,
    monthlyMicros: usdToMicros(platform.config.pricing.phoneNumberMonthlyUsd),
    hasLiveCallOn: deps.hasLiveCallOn,
  });
  return { routes: phoneNumbersRoutes(service), service };
}
