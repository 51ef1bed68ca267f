import path from 'node:path';
import { defineConfig } from 'vite';

// The dashboard's build: one SPA, hashed files under dist/assets (served immutable by the
// platform), the TypeScript SDK bundled from its sources (sdks/typescript/src) so the dashboard
// always speaks the API of this commit. No dev-only plugin: JSX is compiled by Vite's own
// transformer (tsconfig "jsx": "react-jsx").
const root = import.meta.dirname;

export default defineConfig({
  root,
  base: '/',
  logLevel: 'warn',
  resolve: {
    alias: {
      '@voice-agent-platform/sdk': path.resolve(root, '../../sdks/typescript/src/index.ts'),
      'node:crypto': path.resolve(root, 'src/api/no-node-crypto.ts'),
    },
  },
  build: {
    outDir: path.resolve(root, 'dist'),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: false,
    chunkSizeWarningLimit: 800,
    rolldownOptions: {
      // React Query marks its hooks "use client" (for server components); a SPA has no server side.
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
    },
  },
});
