// The console builds into dist/: index.html and hashed files under assets/, which the
// facilitator serves at / and /assets/ (packages/facilitator/src/http/console.ts).
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const CORE_SOURCES = '/packages/core/src/';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  logLevel: 'warn',
  build: {
    // Shipped inside @svc/facilitator, which serves it at /.
    outDir: '../facilitator/console',
    emptyOutDir: true,
    target: 'es2022',
    // No inline script for the module preload polyfill: the facilitator's CSP allows none.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    rolldownOptions: {
      // @svc/core is pure (docs/architecture.md): the console uses its amount formatting, and the
      // modules it does not use (keys, vouchers, schemas and their libraries) are left out.
      treeshake: { moduleSideEffects: (id: string) => !id.includes(CORE_SOURCES) },
    },
  },
});
