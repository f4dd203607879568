// The built customer panel for the tests of test/panel (docs/decisions/0031-customer-panel.md).
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { createTestApp, type EngineName } from './app.js';

/**
 * How long a browser test or hook may take: Chromium beside three other test files on two cores
 * can be many times slower than alone. A bound for a hang, never a speed check.
 */
export const BROWSER_TEST_MS = 180_000;

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

/** Debian's Chromium (apt-get install chromium), driven by playwright-core; no browser download. */
export const CHROMIUM = '/usr/bin/chromium';
export const chromiumMissing = fs.existsSync(CHROMIUM) ? null : `${CHROMIUM} is missing (apt-get install chromium)`;

/**
 * Headless Chromium that stays quiet on a closed network: without the background-networking
 * flags it keeps trying Google's services.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** An app on a fresh database listening on 127.0.0.1 (a free port), as a browser reaches it. */
export async function listeningApp(engine: EngineName, env: Record<string, string> = {}, opts: Parameters<typeof createTestApp>[2] = {}) {
  const t = await createTestApp(engine, env, opts);
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = t.app.server.address() as AddressInfo;
  return { t, origin: `http://127.0.0.1:${port}` };
}

/**
 * A page that records what would break the panel's promises: any request to another origin, any
 * Content-Security-Policy violation, any uncaught error.
 */
export async function watchedPage(context: BrowserContext, origin: string) {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('request', (r) => {
    const url = r.url();
    if (!url.startsWith(`${origin}/`) && !url.startsWith('data:')) problems.push(`third-party request: ${url}`);
  });
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text())) problems.push(`CSP: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  return { page, problems };
}

const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * axe-core's serious and critical violations on the page as it is now (WCAG 2.1 A and AA rules).
 * Evaluated through the DevTools protocol: the page's CSP refuses injected script tags, which is
 * the point of it.
 */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  const result = (await page.evaluate(() =>
    (window as unknown as { axe: { run(ctx: unknown, o: unknown): Promise<unknown> } }).axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
      resultTypes: ['violations'],
    }),
  )) as { violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[] };
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}
