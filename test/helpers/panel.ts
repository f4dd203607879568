// The built customer panel for the tests of test/panel (docs/decisions/0031-customer-panel.md).
import fs from 'node:fs';
import path from 'node:path';

export const PANEL_DIR = path.resolve(import.meta.dirname, '../../dist/panel');

/** dist/panel/index.html, or a failure that says how to build it: a test never passes on a missing build. */
export function requireBuiltPanel(): string {
  const index = path.join(PANEL_DIR, 'index.html');
  if (!fs.existsSync(index)) {
    throw new Error(`The customer panel is not built (${index} is missing): run \`npm run build:panel\` (npm install runs it) before these tests.`);
  }
  return fs.readFileSync(index, 'utf8');
}

/** The scripts and style sheets index.html loads, as URL paths. */
export function assetsOf(index: string): string[] {
  return [...index.matchAll(/(?:src|href)="(\/panel\/assets\/[^"]+)"/g)].map((m) => m[1]);
}
