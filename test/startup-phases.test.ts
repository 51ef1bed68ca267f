import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createStartupPhases } from '../src/platform/startup-phases.ts';

describe('start-up phases', () => {
  it('end answers the moment it ended, which the consecutive phases add up to whatever runs after', () => {
    const readings = [12.34, 40.01, 40.02, 97.5, 250];
    let i = 0;
    let cpu = 0;
    const phases = createStartupPhases(() => readings[i++] ?? 999, () => (cpu += 5));
    assert.equal(phases.end('modules'), 12.3);
    assert.equal(phases.end('database_open'), 40);
    phases.end('migrations');
    const listening = phases.end('listen');
    assert.equal(listening, 97.5);
    // A later clock reading (here 250 ms, a pause on a busy machine) changes nothing already ended.
    phases.end('openapi');
    const report = phases.report();
    const upToListen = report.modules + report.database_open + report.migrations + report.listen;
    assert.ok(Math.abs(upToListen - listening) < 0.5, `${upToListen} vs ${listening}`);
    assert.equal(report.openapi, 152.5);
    assert.deepEqual(phases.cpu(), { modules: 5, database_open: 5, migrations: 5, listen: 5, openapi: 5 });
  });

  it('beside times work that runs beside the sequence', async () => {
    const readings = [10, 35];
    let i = 0;
    const phases = createStartupPhases(() => readings[i++], () => 0);
    assert.equal(await phases.beside('warm_up', Promise.resolve('done')), 'done');
    assert.deepEqual(phases.report(), { warm_up: 25 });
  });
});
