// The customer panel's build (docs/decisions/0031-customer-panel.md): Preact through esbuild's own
// JSX transform, no Babel; every file a page loads comes from dist/panel on hostplane itself.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: here,
  // hostplane serves the panel at /panel/ (src/http/panel.ts), same origin as the API.
  base: '/panel/',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: fileURLToPath(new URL('../dist/panel', import.meta.url)),
    emptyOutDir: true,
    // Hashed names under assets/ are served as immutable; the CSP allows data: images only.
    assetsDir: 'assets',
    assetsInlineLimit: 0,
    // Browsers the panel supports load modules natively: no polyfill script.
    modulePreload: { polyfill: false },
    target: 'es2020',
    reportCompressedSize: false,
  },
});
