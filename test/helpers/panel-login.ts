// One Chromium for a panel suite and logged-in pages in it (docs/decisions/0031-customer-panel.md):
// `const b = usePanelBrowser(() => origin)` in a describe, then `await b.loggedIn(email, password)`.
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { BROWSER_TEST_MS, launchChromium, watchedPage } from './panel-browser.js';

export interface PanelPageOptions {
  locale?: string;
  viewport?: { width: number; height: number };
}

export function usePanelBrowser(origin: () => string) {
  let browser: Browser | undefined;
  const contexts: BrowserContext[] = [];
  beforeAll(async () => {
    browser = await launchChromium();
  }, BROWSER_TEST_MS);
  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await browser?.close();
  });

  /** A fresh browser context (its own cookies) and a watched page in it. */
  async function open(o: PanelPageOptions = {}) {
    const context = await browser!.newContext({ locale: o.locale ?? 'en-US', viewport: o.viewport ?? { width: 1280, height: 900 } });
    contexts.push(context);
    return { context, ...(await watchedPage(context, origin())) };
  }

  /** Logs in through the English login form and waits for the package overview. */
  async function loggedIn(email: string, password: string, o: PanelPageOptions = {}) {
    const s = await open(o);
    await s.page.goto(`${origin()}/panel/login`);
    await s.page.getByLabel('E-mail address').fill(email);
    await s.page.getByLabel('Portal password').fill(password);
    await s.page.getByRole('button', { name: 'Log in' }).click();
    await s.page.getByRole('heading', { level: 1, name: 'Your packages' }).waitFor();
    return s;
  }

  return { open, loggedIn };
}
