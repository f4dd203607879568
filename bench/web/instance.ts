// A hostplane instance of the web server bench: the local stack's Caddy, an app, a worker and the
// web reconciler on the engine's store, a web driver that marks when each push happened, and what
// Caddy's own log says of its config loads.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import { benchConfig, freshBenchStore, processUrlOf } from '../store.js';
import { discard, PG_URL } from '../report.js';
import { freePort } from '../../test/helpers/ports.js';
import { buildApp } from '../../src/app.js';
import type { Config } from '../../src/config.js';
import type { Store } from '../../src/db/index.js';
import { MemoryLimiter } from '../../src/limits/limiter.js';
import { buildAdmin } from '../../src/admin/index.js';
import { serviceDeps } from '../../src/resources/service-deps.js';
import { Worker, workerSettings } from '../../src/queue/worker.js';
import { buildJobs } from '../../src/resources/jobs.js';
import { buildDrivers, closeDrivers, type Drivers } from '../../src/provisioning/drivers.js';
import { DnsServer } from '../../src/dns/server.js';
import type { WebDriver } from '../../src/provisioning/web/driver.js';
import type { WebServerConn } from '../../src/provisioning/web/sites.js';
import { WebServersRepository, webServerConn } from '../../src/provisioning/web/servers.repository.js';
import { startWebReconciler } from '../../src/resources/subdomains/subdomains.reconcile.js';
import { WEB, DOMAIN, type EngineName, stacks } from './settings.js';

export interface CaddyLoad {
  /** Wall-clock ms: the admin API received POST /load … logged "load complete". */
  start: number;
  end: number;
}

/** The loads and GET /config/ requests Caddy logged (its admin API logs every request at info). */
export function readCaddyLog(file: string): { loads: CaddyLoad[]; configGets: number[] } {
  const loads: CaddyLoad[] = [];
  const configGets: number[] = [];
  let open: number | null = null;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line.startsWith('{')) continue;
    let e: { logger?: string; msg?: string; ts?: number; method?: string; uri?: string };
    try {
      e = JSON.parse(line);
    } catch {
      continue;
    }
    if (e.logger !== 'admin.api' || typeof e.ts !== 'number') continue;
    const ts = e.ts * 1000;
    if (e.msg === 'received request' && e.method === 'POST' && e.uri === '/load') open = ts;
    else if (e.msg === 'received request' && e.method === 'GET' && e.uri === '/config/') configGets.push(ts);
    else if (e.msg === 'load complete' && open !== null) {
      loads.push({ start: open, end: ts });
      open = null;
    }
  }
  return { loads, configGets };
}

// ---- the instance ------------------------------------------------------------------------------

/** A call of the web or DNS driver, as the bench's wrappers noted it (performance.now()). */
export interface Mark {
  who: 'job' | 'reconciler';
  what: 'apply' | 'probe' | 'dns';
  start: number;
  end: number;
  /** apply: whether it loaded a config (every caller of a coalesced batch gets the batch's answer). */
  loaded?: boolean;
  host?: string;
  /** probe: the status answered; dns: 1 when the change was applied. */
  status?: number;
  sites?: number;
}

/**
 * The web driver as the worker (or the reconciler) uses it, with the times of its `apply` and
 * `probe` calls noted; both wrappers share one driver, so one Caddy client coalesces their pushes.
 */
export function timedWeb(inner: WebDriver, who: Mark['who'], marks: Mark[]): WebDriver {
  return {
    ...inner,
    async apply(server, sites) {
      const start = performance.now();
      const loaded = await inner.apply(server, sites);
      marks.push({ who, what: 'apply', start, end: performance.now(), loaded, sites: sites.length });
      return loaded;
    },
    async probe(server, host, urlPath, https) {
      const start = performance.now();
      const a = await inner.probe(server, host, urlPath, https);
      marks.push({ who, what: 'probe', start, end: performance.now(), host, status: a.status });
      return a;
    },
  };
}

export interface Instance {
  engine: EngineName;
  store: Store;
  config: Config;
  app: FastifyInstance;
  base: string;
  web: WebServerConn;
  stackDir: string;
  caddyLog: string;
  token: string;
  /** The product's web driver, unwrapped (the component timings use it). */
  innerWeb: WebDriver;
  marks: Mark[];
  /** Starts the worker and the reconciler (the existing sites are created before). */
  startBackground(): Promise<void>;
  close(): Promise<void>;
}

/**
 * As `serve` builds it with WEB_SERVER=local (src/cli/serve.ts), on a free port: the app, a DNS
 * server on 127.0.0.1:0, then (startBackground) the worker with the general and the web server's
 * queue and the reconciler. The stack is up and registered, the customer's package and domain made.
 */
export async function startInstance(engine: EngineName, root: string, label: string): Promise<Instance> {
  const { store, databaseUrl, drop } = await freshBenchStore(engine, PG_URL);
  const stackDir = path.join(root, `${engine}-${label}`);
  let limiter: MemoryLimiter | null = null;
  let app: FastifyInstance | null = null;
  let dns: DnsServer | null = null;
  let drivers: Drivers | null = null;
  let worker: Worker | null = null;
  let stopReconciler: (() => Promise<void>) | null = null;
  // Whatever was started, in reverse; the worker first, so no job pushes a config after the stack went.
  const close = async () => {
    await stopReconciler?.();
    await worker?.stop();
    await dns?.stop();
    if (drivers) await closeDrivers(drivers);
    await app?.close();
    await limiter?.close();
    if (stacks.has(stackDir)) await stacks.down(stackDir);
    await drop();
  };
  try {
    // The CLI up.sh runs reaches this store: the schema of a PostgreSQL store goes into its URL.
    const processUrl = (await processUrlOf(store, databaseUrl)).url;
    await stacks.up(stackDir, { DATABASE_URL: processUrl });
    const row = await new WebServersRepository(store.db).byName(WEB);
    if (!row) throw new Error(`up.sh did not register web server ${WEB}`);
    const web = webServerConn(row);

      for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const config = benchConfig(databaseUrl, base, { WEB_SERVER: WEB, WEB_TLS_ISSUER: 'internal' });
      limiter = new MemoryLimiter(config);
      app = await buildApp(config, { store, limiter, logStream: discard() });
      try {
        await app.listen({ host: '127.0.0.1', port });
      } catch (err) {
        await app.close();
        await limiter.close();
        app = limiter = null;
        if (attempt < 5 && (err as NodeJS.ErrnoException).code === 'EADDRINUSE') continue;
        throw err;
      }

      const admin = buildAdmin(serviceDeps(store, config));
      const { customerId, contactId } = await admin.customers.createCustomer({ organization: 'Bench AG', contact: { name: 'bench', email: 'admin@bench.example', phone: '+49 30 1234567' } });
      const { planId } = await admin.packages.createPlan({ name: 'bench plan', maxSubdomains: 2000, phpVersions: Object.keys(web.php).sort().slice(0, 1) });
      const { packageId } = await admin.packages.createPackage({ customerId, planId, name: 'bench', linuxUser: 'web_bench' });
      await admin.domains.createDomain({ name: DOMAIN, customerId, packageId, registered: true });
      const { token } = await admin.customers.issueToken(contactId, 'bench');

      // Started before the worker, as under `serve`: subdomain jobs wait for a live DNS server.
      dns = await DnsServer.start({ store, config, log: app.log, listen: '127.0.0.1:0' });
      const built = buildDrivers({ config, store });
      const marks: Mark[] = [];
      drivers = {
        ...built,
        web: timedWeb(built.web, 'job', marks),
        dns: {
          ...built.dns,
          async isApplied(changeId) {
            const start = performance.now();
            const ok = await built.dns.isApplied(changeId);
            marks.push({ who: 'job', what: 'dns', start, end: performance.now(), status: ok ? 1 : 0 });
            return ok;
          },
        },
      };
      const jobDrivers = drivers;
      const theApp = app;
      return {
        engine, store, config, app, base, web, stackDir, token, marks,
        caddyLog: path.join(stackDir, 'caddy', 'caddy.log'),
        innerWeb: built.web,
        async startBackground() {
          worker = new Worker({ store, jobs: buildJobs(), drivers: jobDrivers, log: theApp.log, ...workerSettings(config) });
          await worker.start();
          stopReconciler = startWebReconciler({ store, web: timedWeb(built.web, 'reconciler', marks), name: WEB, log: theApp.log });
        },
        close,
      };
    }
  } catch (err) {
    await close().catch((e) => console.error(`cleanup after a failed start: ${(e as Error).message}`));
    throw err;
  }
}
