import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';

// The layers' dependency rules (.dependency-cruiser.cjs) run by `npm run lint`: the real tree passes,
// and a small tree with one planted import per rule fails with exactly those violations (the known
// exceptions pass, a new import beside them does not).

const root = path.join(import.meta.dirname, '..');
const config = path.join(root, '.dependency-cruiser.cjs');
const cli = path.join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');

interface Violation {
  type: string;
  from: string;
  to: string;
  rule: { name: string; severity: string };
}

/** Runs the check in `cwd` as `npm run lint` does. */
const lint = (cwd: string) => spawnSync(process.execPath, [cli, 'src', '--config', config], { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });

/** The check's violations in `cwd`, as its JSON report lists them. */
function violationsIn(cwd: string): Violation[] {
  const run = spawnSync(process.execPath, [cli, 'src', '--config', config, '--output-type', 'json'], { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  assert.equal(run.stderr.trim(), '', run.stderr);
  return (JSON.parse(run.stdout) as { summary: { violations: Violation[] } }).summary.violations;
}

/** One source file per entry: path under the fixture's root → its text. */
const FIXTURE: Record<string, string> = {
  'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', allowImportingTsExtensions: true, noEmit: true }, include: ['src'] }),
  'src/ports/thing.ts': 'export interface Thing { x: number }\n',
  'src/ports/bad-port.ts': "import type { Row } from '../modules/alpha/tables.ts';\nexport type Port = Row;\n",
  'src/platform/util.ts': 'export const util = 1;\n',
  'src/platform/bad.ts': "import { alpha } from '../modules/alpha/service.ts';\nexport const bad = alpha;\n",
  // Accepted: the Database type joins the modules' tables.
  'src/platform/db/schema.ts': "import type { Row } from '../../modules/alpha/tables.ts';\nexport interface Database { alpha: Row }\n",
  'src/runtime/clock.ts': "import type { Thing } from '../ports/thing.ts';\nexport const clock = (t: Thing) => t.x;\n",
  'src/runtime/bad.ts': "import { value } from '../modules/alpha/values.ts';\nexport const bad = value;\n",
  'src/engine/bad.ts': "import { clock } from '../runtime/clock.ts';\nexport const bad = clock;\n",
  'src/providers/index.ts': "import { sandbox } from './telephony/sandbox.ts';\nimport { twilio } from './telephony/twilio.ts';\nexport type ProviderOverrides = { a?: number };\nexport const providers = [sandbox, twilio];\n",
  // A type-only import counts.
  'src/providers/telephony/sandbox.ts':
    "import type { Row } from '../../modules/alpha/tables.ts';\nimport type { Thing } from '../../ports/thing.ts';\nimport { util } from '../../platform/util.ts';\nexport const sandbox = (r: Row, t: Thing) => util + t.x + r.id.length;\n",
  'src/providers/telephony/twilio.ts': "import { util } from '../../platform/util.ts';\nexport const twilio = util;\n",
  'src/providers/tts/voice.ts': "import { clock } from '../../runtime/clock.ts';\nexport const voice = clock;\n",
  'src/modules/alpha/tables.ts': 'export interface Row { id: string }\n',
  'src/modules/alpha/values.ts': 'export const value = 2;\n',
  // alpha → beta → alpha: a cycle between folders, with no cycle between files.
  'src/modules/alpha/service.ts': "import type { Thing } from '../../ports/thing.ts';\nimport { beta } from '../beta/service.ts';\nexport const alpha = (t: Thing) => beta + t.x;\n",
  'src/modules/beta/service.ts': "import { value } from '../alpha/values.ts';\nexport const beta = value;\n",
  'src/modules/alpha/uses-adapter.ts': "import { sandbox } from '../../providers/telephony/sandbox.ts';\nexport const uses = sandbox;\n",
  'src/modules/alpha/uses-overrides.ts': "import type { ProviderOverrides } from '../../providers/index.ts';\nexport type Uses = ProviderOverrides;\n",
  'src/modules/alpha/alpha.test.ts': "import { sandbox } from '../../providers/telephony/sandbox.ts';\nexport const t = sandbox;\n",
  // Invitations depend on workspaces, one way.
  'src/modules/invitations/service.ts': "import { members } from '../workspaces/repo.ts';\nexport const invite = members;\n",
  'src/modules/workspaces/repo.ts': 'export const members = 3;\n',
  // Workspaces importing invitations back (the cycle issue 30 removed) fails, as any cycle does.
  'src/modules/workspaces/routes.ts': "import { invite } from '../invitations/service.ts';\nexport const routes = invite;\n",
  'src/modules/workspaces/uses-gamma.ts': "import { gamma } from '../gamma/service.ts';\nexport const w = gamma;\n",
  'src/modules/gamma/service.ts': "import { members } from '../workspaces/repo.ts';\nexport const gamma = members;\n",
  // No longer an exception (issue 30): modules/telephony reaches the carrier through the telephony port.
  'src/modules/telephony/routes.ts': "import { twilio } from '../../providers/telephony/twilio.ts';\nimport { voice } from '../../providers/tts/voice.ts';\nexport const routes = [twilio, voice];\n",
  'src/app.ts': "import { providers } from './providers/index.ts';\nimport { alpha } from './modules/alpha/service.ts';\nexport const app = [providers, alpha];\n",
};

const EXPECTED = [
  'ports-are-leaves: src/ports/bad-port.ts → src/modules/alpha/tables.ts',
  'platform-beside: src/platform/bad.ts → src/modules/alpha/service.ts',
  'runtime-below-modules: src/runtime/bad.ts → src/modules/alpha/values.ts',
  'engine-below-runtime: src/engine/bad.ts → src/runtime/clock.ts',
  'providers-see-ports: src/providers/telephony/sandbox.ts → src/modules/alpha/tables.ts',
  'providers-see-ports: src/providers/tts/voice.ts → src/runtime/clock.ts',
  'no-adapter-below-composition: src/modules/alpha/uses-adapter.ts → src/providers/telephony/sandbox.ts',
  'no-adapter-below-composition: src/modules/alpha/uses-overrides.ts → src/providers/index.ts',
  'no-adapter-below-composition: src/modules/telephony/routes.ts → src/providers/telephony/twilio.ts',
  'no-adapter-below-composition: src/modules/telephony/routes.ts → src/providers/tts/voice.ts',
  'no-module-cycle: src/modules/alpha → src/modules/beta',
  'no-module-cycle: src/modules/beta → src/modules/alpha',
  'no-module-cycle: src/modules/gamma → src/modules/workspaces',
  'no-module-cycle: src/modules/invitations → src/modules/workspaces',
  'no-module-cycle: src/modules/workspaces → src/modules/invitations',
  'no-module-cycle: src/modules/workspaces → src/modules/gamma',
].sort();

describe('dependency rules', () => {
  it('npm run lint runs them', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    assert.match(pkg.scripts.lint, /&& depcruise src --config \.dependency-cruiser\.cjs$/);
  });

  it('fail on each planted import, and only on those', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-deps-'));
    try {
      for (const [file, text] of Object.entries(FIXTURE)) {
        fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
        fs.writeFileSync(path.join(dir, file), text);
      }
      const violations = violationsIn(dir);
      assert.deepEqual(violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort(), EXPECTED);
      assert.ok(violations.every((v) => v.rule.severity === 'error'));
      assert.notEqual(lint(dir).status, 0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('pass on the real tree', () => {
    const run = lint(root);
    assert.equal(run.status, 0, run.stdout);
  });
});
