import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db/schema.ts';
import { AppError, conflict, invalidField, invalidState, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { microsToUsd } from '../../platform/money.ts';
import { type PageRequest, toPage } from '../../platform/pagination.ts';
import { toE164 } from '../../platform/phone.ts';
import { createWalletRepo } from '../wallet/repo.ts';
import type { AvailableNumber, NumberInventory } from '../../ports/number-inventory.ts';
import type { EventEmitter } from '../../platform/outbox/emit.ts';
import { createPhoneNumbersRepo, type PhoneNumberRow } from './repo.ts';
import type { AcquireBody, PhoneNumber, PhoneNumberUpdate } from './schemas.ts';

// Phone numbers: searched, bought (the first month debited in the same transaction), imported,
// assigned to agents, released (never while a call on the number is live).

export interface PhoneNumbersDeps {
  db: Database;
  clock: Clock;
  inventory: NumberInventory;
  monthlyMicros: number;
  /** Emits wallet.low_balance when a purchase takes the balance below the threshold. */
  events?: EventEmitter;
  /** Whether a call from or to the number is live in the workspace (the calls module reads it: calls depend on numbers, not back). */
  hasLiveCallOn(workspaceId: string, number: string): Promise<boolean>;
}

export function presentPhoneNumber(row: PhoneNumberRow): PhoneNumber {
  return {
    id: row.id,
    number: row.number,
    country: row.country,
    provider: row.provider,
    capabilities: row.capabilities as PhoneNumber['capabilities'],
    agent_id: row.agent_id,
    label: row.label,
    monthly_cost_usd: microsToUsd(Number(row.monthly_cost_micros)),
    created_at: new Date(row.created_at).toISOString(),
  };
}

export function createPhoneNumbersService(deps: PhoneNumbersDeps) {
  const { db, clock, inventory } = deps;
  const repo = createPhoneNumbersRepo();
  const wallet = createWalletRepo({ events: deps.events });

  function e164(raw: string): string {
    const number = toE164(raw);
    if (!number) throw invalidField('number', 'must be a possible phone number (E.164, e.g. +15550142007)');
    return number;
  }

  async function checkAgent(workspaceId: string, agentId: string | null | undefined) {
    if (!agentId) return;
    const agent = await db.selectFrom('agents').select('id').where('workspace_id', '=', workspaceId).where('id', '=', agentId).where('deleted_at', 'is', null).executeTakeFirst();
    if (!agent) throw invalidField('agent_id', 'no such agent in this workspace');
  }

  async function mustFind(workspaceId: string, id: string) {
    const row = await repo.get(db, workspaceId, id);
    if (!row) throw notFound('phone number');
    return row;
  }

  return {
    async list(workspaceId: string, page: PageRequest, agentId?: string) {
      return toPage(await repo.list(db, workspaceId, page, agentId), page, (r) => r.id, presentPhoneNumber);
    },

    async available(query: { country?: string; area_code?: string; contains?: string; limit?: number }) {
      const limit = query.limit ?? 10;
      const free: AvailableNumber[] = [];
      // Numbers held in this deployment are skipped, and the search goes on past them (a provider
      // whose inventory knows nothing of them, the sandbox's, would otherwise run dry for every
      // tenant once its first numbers were bought): rounds of growing size, at most five.
      const seen = new Set<string>();
      for (let round = 0, size = limit * 3; round < 5 && free.length < limit; round++, size *= 2) {
        const found = await inventory.search({ country: (query.country ?? 'US').toUpperCase(), areaCode: query.area_code, contains: query.contains, limit: size, exclude: seen });
        const owned = await repo.owned(db, found.map((n) => n.number));
        for (const n of found) {
          seen.add(n.number);
          if (!owned.has(n.number) && free.length < limit) free.push(n);
        }
        if (found.length < size || owned.size === 0) break;
      }
      return { data: free.map((n) => ({ ...n, monthly_cost_usd: microsToUsd(deps.monthlyMicros) })) };
    },

    /** Buys a number of the provider's inventory: the first month is debited with it, or nothing happens. */
    async buy(workspaceId: string, body: AcquireBody): Promise<PhoneNumber> {
      const number = e164(body.number);
      await checkAgent(workspaceId, body.agent_id);
      if ((await repo.owned(db, [number])).size > 0) throw conflict(`${number} is already taken`);
      const provisioned = await inventory.buy(number);
      if (!provisioned) throw invalidField('number', 'is not for sale: pick one from GET /v1/phone-numbers/available');
      const now = clock.now();
      const row = await db.transaction().execute(async (tx) => {
        const balance = await tx.selectFrom('wallets').select('balance_micros').where('workspace_id', '=', workspaceId).forUpdate().executeTakeFirst();
        if (Number(balance?.balance_micros ?? 0) < deps.monthlyMicros) {
          throw new AppError('insufficient_balance', `buying a number debits its first month (${microsToUsd(deps.monthlyMicros)} USD); top up the wallet`);
        }
        const inserted = await repo.insert(tx, {
          id: newId('pn'),
          workspace_id: workspaceId,
          number,
          country: provisioned.country,
          provider: inventory.provider,
          provider_number_id: provisioned.providerNumberId,
          capabilities: provisioned.capabilities,
          agent_id: body.agent_id ?? null,
          label: body.label ?? null,
          monthly_cost_micros: deps.monthlyMicros,
          created_at: now,
          updated_at: now,
        });
        if (!inserted) throw conflict(`${number} is already taken`);
        await wallet.applyEntry(tx, { workspaceId, type: 'phone_number', amountMicros: -deps.monthlyMicros, description: `phone number ${number}, first month`, referenceId: inserted.id, now });
        return inserted;
      });
      return presentPhoneNumber(row);
    },

    /** A number the user already holds at the provider: no charge here. */
    async import(workspaceId: string, body: AcquireBody): Promise<PhoneNumber> {
      const number = e164(body.number);
      await checkAgent(workspaceId, body.agent_id);
      const known = await inventory.lookup(number);
      if (!known) throw invalidField('number', `the ${inventory.provider} account does not hold this number`);
      const now = clock.now();
      const row = await repo.insert(db, {
        id: newId('pn'),
        workspace_id: workspaceId,
        number,
        country: known.country,
        provider: inventory.provider,
        provider_number_id: known.providerNumberId,
        capabilities: known.capabilities,
        agent_id: body.agent_id ?? null,
        label: body.label ?? null,
        monthly_cost_micros: 0,
        created_at: now,
        updated_at: now,
      });
      if (!row) throw conflict(`${number} is already taken`);
      return presentPhoneNumber(row);
    },

    async get(workspaceId: string, id: string) {
      return presentPhoneNumber(await mustFind(workspaceId, id));
    },

    async update(workspaceId: string, id: string, changes: PhoneNumberUpdate) {
      await mustFind(workspaceId, id);
      await checkAgent(workspaceId, changes.agent_id);
      const row = await repo.update(db, workspaceId, id, changes, clock.now());
      if (!row) throw notFound('phone number');
      return presentPhoneNumber(row);
    },

    async release(workspaceId: string, id: string) {
      const row = await mustFind(workspaceId, id);
      if (await deps.hasLiveCallOn(workspaceId, row.number)) throw invalidState('a call on this number is live; release it after the call');
      if (row.provider_number_id) await inventory.release(row.provider_number_id);
      if (!(await repo.remove(db, workspaceId, id))) throw notFound('phone number');
    },
  };
}

export type PhoneNumbersService = ReturnType<typeof createPhoneNumbersService>;
