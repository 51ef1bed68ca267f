// The layers' dependency rules, checked by `npm run lint` (docs/ARCHITECTURE.md, "Layers"):
//
//   server.ts / app.ts (composition) → modules → runtime → engine → ports ← providers
//                                      platform beside: used by all, uses none of them (ports aside)
//
// Every import counts, type-only ones included: the parser (swc; dependency-cruiser cannot use
// TypeScript 7) does not tell them apart, and a type names its layer as much as a value does.
// Tests, test helpers and fakes are not checked (like the composition root, they may wire
// anything). `platform/db/schema.ts`, which joins the modules' table types into the Database type,
// is left out of the graph: the one accepted platform → modules import (docs/decisions.md).

function layerRule(name, comment, from, to) {
  return { name, comment, severity: 'error', from: { path: from }, to: { path: to } };
}

const moduleCycleRules = [
  {
    name: 'no-module-cycle',
    comment: 'Modules depend on each other one way only: a cycle between src/modules/<a> and src/modules/<b> ties them into one.',
    severity: 'error',
    scope: 'folder',
    from: { path: '^src/modules/([^/]+)' },
    to: { circular: true, path: '^src/modules/', pathNot: '^src/modules/$1(/|$)' },
  },
];

module.exports = {
  forbidden: [
    {
      name: 'ports-are-leaves',
      comment: 'A port (src/ports/) names only other ports and libraries, so both its consumer and its adapters can import it.',
      severity: 'error',
      from: { path: '^src/ports/' },
      to: { path: '^src/', pathNot: '^src/ports/' },
    },
    layerRule(
      'providers-see-ports',
      'An adapter (src/providers/) imports ports, platform utilities, libraries and other adapters: never a module, the runtime, the engine or the composition.',
      '^src/providers/',
      '^src/(modules|runtime|engine)/|^src/[^/]+\\.ts$|^src/platform/platform\\.ts$',
    ),
    layerRule(
      'no-adapter-below-composition',
      'Only the composition root (src/app.ts, src/server.ts) names adapters (through src/providers/index.ts): modules, the runtime, the engine, the platform and the ports reach them through ports.',
      '^src/(modules|runtime|engine|platform|ports)/',
      '^src/providers/',
    ),
    layerRule(
      'platform-beside',
      'The platform (src/platform/) is used by every layer and uses none of them (ports aside; adapters: no-adapter-below-composition).',
      '^src/platform/',
      '^src/(modules|runtime|engine)/',
    ),
    layerRule('runtime-below-modules', 'The call runtime knows no module (no HTTP, no SQL).', '^src/runtime/', '^src/modules/'),
    layerRule('engine-below-runtime', 'The dialogue engine knows no module and no call runtime.', '^src/engine/', '^src/(modules|runtime)/'),
    ...moduleCycleRules,
  ],
  options: {
    parser: 'swc',
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: {
      path: ['\\.test\\.ts$', 'fake', 'test-helpers\\.ts$', '^src/platform/db/schema\\.ts$', '^src/(app|server)\\.ts$', '^test/'],
    },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
