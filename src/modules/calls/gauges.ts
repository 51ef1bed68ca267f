import type { FastifyBaseLogger } from 'fastify';
import { Gauge, type Registry } from 'prom-client';
import type { Database } from '../../platform/db/schema.ts';
import type { CallRunner } from './runner.ts';

// Gauges read at scrape time: this process's live calls (and their media sessions by transport),
// and, from the database, the calls waiting for the dialer and the calls whose post-call work
// (recording, analysis, call.ended) is still to come. The queries use the queues' own indexes.

export function registerCallGauges(registry: Registry, deps: { db: Database; runner: CallRunner; logger: FastifyBaseLogger }) {
  const { db, runner, logger } = deps;
  new Gauge({
    name: 'vap_calls_live',
    help: 'Calls this process runs now (dialing or connected)',
    registers: [registry],
    collect() {
      this.set(runner.size);
    },
  });
  new Gauge({
    name: 'vap_media_sessions',
    help: 'Connected calls of this process by media transport (sandbox, twilio, web, livekit)',
    labelNames: ['transport'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [transport, count] of runner.mediaSessions()) this.set({ transport }, count);
    },
  });
  const queued: Gauge = new Gauge({ name: 'vap_calls_queued', help: 'Calls waiting for the dialer (all workspaces)', registers: [registry], collect: () => read() });
  const pending: Gauge = new Gauge({
    name: 'vap_post_call_jobs_pending',
    help: 'Ended calls whose post-call work (recording, analysis, call.ended) is still to come',
    registers: [registry],
    collect: () => read(),
  });
  // Both read by one pair of queries per scrape (prom-client collects the two at once).
  let reading: Promise<void> | null = null;
  const read = () => {
    reading ??= (async () => {
      try {
        const [q, p] = await Promise.all([
          db.selectFrom('calls').select((eb) => eb.fn.countAll<string>().as('n')).where('status', '=', 'queued').executeTakeFirst(),
          db.selectFrom('calls').select((eb) => eb.fn.countAll<string>().as('n')).where('post_call_due_at', 'is not', null).executeTakeFirst(),
        ]);
        queued.set(Number(q?.n ?? 0));
        pending.set(Number(p?.n ?? 0));
      } catch (err) {
        logger.warn({ err }, 'call gauges: query failed');
        queued.set(Number.NaN);
        pending.set(Number.NaN);
      }
    })().finally(() => {
      reading = null;
    });
    return reading;
  };
}
