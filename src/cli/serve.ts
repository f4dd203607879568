// `hostplane serve`: the API server. Migrates at start; on a new database loads
// the demo dataset when DEMO_DATA says so (default `auto`: only for the embedded SQLite default,
// so `npm install && npm start` is a working playground and a real deployment never gets demo
// tokens); listens on HOST:PORT; runs the job worker (src/queue/worker.ts) and the DNS server
// (src/dns, unless DNS_LISTEN=off); shuts down gracefully on SIGINT/SIGTERM.
import type { FastifyInstance } from 'fastify';
import { loadConfig, wantsDemoData } from '../config.js';
import type { Store } from '../db/index.js';
import { migrate } from '../db/migrate.js';
import { buildApp } from '../app.js';
import { loadPasswordDictionaries } from '../security/password-policy.js';
import { MemoryLimiter, type Limiter } from '../limits/limiter.js';
import { RedisLimiter } from '../limits/redis-limiter.js';
import { buildAdmin } from '../admin/index.js';
import { serviceDeps } from '../resources/service-deps.js';
import { loadDemoData } from '../admin/demo.js';
import { formatDemo } from './demo.js';
import { Worker, workerSettings } from '../queue/worker.js';
import { buildJobs } from '../resources/jobs.js';
import { buildDrivers, closeDrivers, type Drivers } from '../provisioning/drivers.js';
import { startWebReconciler } from '../resources/subdomains/subdomains.reconcile.js';
import { startSftpLogins } from '../resources/ssh-keys/ssh-keys.logins.js';
import { startWebhookDispatcher } from '../resources/webhooks/webhooks.dispatcher.js';
import { DnsServer } from '../dns/server.js';
import { dnsListenFailure, httpListenFailure, probeListen } from './listen.js';
import { openConfiguredStore } from './context.js';
import { holdStopSignals } from './signals.js';
import { hostPort } from '../host-port.js';

export { wantsDemoData };

const SHUTDOWN_GRACE_MS = 10_000;

export async function serve(env: Record<string, string | undefined> = process.env): Promise<void> {
  const config = loadConfig(env);
  const store = await openConfiguredStore(config, { longRunning: true });
  let limiter: Limiter | null = null;
  let app: FastifyInstance | null = null;
  let worker: Worker | null = null;
  let dns: DnsServer | null = null;
  let drivers: Drivers | null = null;
  let stopReconciler: (() => Promise<void>) | null = null;
  let stopWebhooks: (() => Promise<void>) | null = null;
  const signals = holdStopSignals();
  try {
    await migrate(store);
    // Redis down: each instance limits on its own; registerLimits logs and counts the fallback.
    limiter = config.redisUrl
      ? new RedisLimiter(config, { url: config.redisUrl })
      : new MemoryLimiter(config);
    app = await buildApp(config, { store, limiter });
    // The password rules' dictionaries (~0.4 s) load now, not in the first request that sets a password.
    loadPasswordDictionaries();
    // Before the worker: DNS jobs are done only once a live DNS server answers their change.
    if (config.dnsListen !== 'off') {
      dns = await DnsServer.start({ store, config, log: app.log.child({ component: 'dns' }) }).catch((err) => {
        throw dnsListenFailure(err, config.dnsListen, true);
      });
    }
    const admin = buildAdmin(serviceDeps(store, config));
    if (wantsDemoData(config) && (await admin.customers.isEmpty())) {
      // The demo's tokens are printed before the API answers, so a client that waits for the port
      // finds them; and only once both ports are known to be free: tokens created for a server
      // that then fails to start would be lost with a database that no longer counts as new.
      await probeListen(config.host, config.port).catch((err) => {
        throw httpListenFailure(err, config.host, config.port);
      });
      const demo = await loadDemoData(admin, config.publicBaseUrl, { mariadbUrl: config.demoMariadbUrl, db: store.db });
      const loopback = /^(127\.|::1$|localhost$)/.test(config.host)
        ? `It listens on ${hostPort(config.host, config.port)} only, for this machine; HOST=0.0.0.0 serves other machines too.\n`
        : '';
      // Plain text for the person at the terminal, next to the JSON log lines (which pino writes
      // asynchronously, so they may land just before or after it).
      process.stdout.write(`\nhostplane serves ${config.publicBaseUrl} (API docs: ${config.publicBaseUrl}/docs)\n${loopback}\n${formatDemo(demo)}\n`);
    }
    await app.listen({ host: config.host, port: config.port }).catch((err) => {
      throw httpListenFailure(err, config.host, config.port);
    });
    // The job worker runs next to the API; `hostplane worker` runs more of them.
    drivers = buildDrivers({ config, store });
    worker = new Worker({ store, jobs: buildJobs(), drivers, log: app.log.child({ component: 'worker' }), ...workerSettings(config) });
    await worker.start();
    // Webhook deliveries, beside the worker whose job outcomes record them (decision 0027).
    stopWebhooks = startWebhookDispatcher({ store, config, log: app.log.child({ component: 'webhooks' }) });
    // The web server of this host (WEB_SERVER) is held to its desired state between jobs.
    if (config.webServer) {
      const webLog = app.log.child({ component: 'web' });
      const stopWeb = startWebReconciler({ store, web: drivers.web, name: config.webServer, log: webLog });
      // The SSH keys' last use: sshd's logins on this web server (decision 0023).
      const stopLogins = startSftpLogins({ config, store, log: webLog });
      stopReconciler = async () => {
        await stopLogins?.();
        await stopWeb();
      };
    }
  } catch (err) {
    await stopReconciler?.().catch(() => {});
    await stopWebhooks?.().catch(() => {});
    await worker?.stop().catch(() => {});
    if (drivers) await closeDrivers(drivers);
    await dns?.stop().catch(() => {});
    await app?.close().catch(() => {});
    await limiter?.close().catch(() => {});
    await store.close().catch(() => {});
    signals.release();
    throw err;
  }

  app.log.info({ database: store.where, listen: hostPort(config.host, config.port), baseUrl: config.publicBaseUrl, limiter: config.redisUrl ? 'redis' : 'memory' }, 'hostplane ready');
  signals.started(stopOf(app, limiter, store, worker, drivers, dns, stopReconciler, stopWebhooks));
}

/** The graceful shutdown on SIGINT/SIGTERM. */
function stopOf(
  app: FastifyInstance, limiter: Limiter, store: Store, worker: Worker, drivers: Drivers, dns: DnsServer | null, stopReconciler: (() => Promise<void>) | null,
  stopWebhooks: (() => Promise<void>) | null,
) {
  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) {
      // A second Ctrl-C means "now".
      process.exit(1);
    }
    stopping = true;
    app.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      app.log.error('graceful shutdown took too long; exiting');
      process.exit(1);
    }, SHUTDOWN_GRACE_MS);
    force.unref();
    let code = 0;
    try {
      // Stops accepting connections and waits for requests in flight.
      await app.close();
    } catch (err) {
      app.log.error({ err }, 'closing the server failed');
      code = 1;
    }
    // Running jobs get what is left of the grace period; unfinished ones are taken over by
    // another worker once their lease expires.
    await stopReconciler?.();
    await stopWebhooks?.();
    await worker.stop({ graceMs: SHUTDOWN_GRACE_MS / 2 });
    await closeDrivers(drivers);
    // Last: jobs still finishing wait for it to answer their changes.
    await dns?.stop().catch((err) => app.log.error({ err }, 'stopping the DNS server failed'));
    await limiter.close().catch(() => {});
    await store.close().catch(() => {});
    process.exit(code);
  };
  return stop;
}
