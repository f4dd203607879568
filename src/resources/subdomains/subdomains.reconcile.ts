// Holding a web server to its desired state between jobs (docs/decisions/0008-web-servers.md):
// Caddy keeps its config in memory, so a Caddy that restarted serves nothing of ours until it is
// told again. The process that runs a web server's jobs (`serve` or `hostplane worker` with
// WEB_SERVER) checks every few seconds and loads the whole config when it differs.
import type { FastifyBaseLogger } from 'fastify';
import type { Store } from '../../db/index.js';
import type { WebDriver } from '../../provisioning/web/driver.js';
import { reconcileWebServer } from './subdomains.jobs.js';

/** How often Caddy's config is compared with the desired one [5 s]. */
export const RECONCILE_EVERY_MS = 5_000;
const ERROR_LOG_EVERY_MS = 60_000;

/** `const stop = startWebReconciler({ store, web, name: 'web1', log })` … `await stop()`. */
export function startWebReconciler(o: { store: Store; web: WebDriver; name: string; log: FastifyBaseLogger; everyMs?: number }): () => Promise<void> {
  let running: Promise<void> | null = null;
  let lastError = 0;
  const check = () => {
    running ??= reconcileWebServer(o.store, o.web, o.name)
      .then((loaded) => {
        if (loaded) o.log.info({ webServer: o.name }, 'web server config was not the desired one: loaded it again');
      })
      .catch((err) => {
        if (Date.now() - lastError < ERROR_LOG_EVERY_MS) return;
        lastError = Date.now();
        o.log.warn({ err, webServer: o.name }, 'could not check the web server config; retrying');
      })
      .finally(() => {
        running = null;
      });
  };
  const timer = setInterval(check, o.everyMs ?? RECONCILE_EVERY_MS);
  check();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
