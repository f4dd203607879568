// `hostplane worker`: the job worker alone, without the API (docs/operator-guide.md
// "The worker"). Run as many as the load needs, on any machine that reaches the database; they
// share the jobs through leases. Handlers still running after the grace period, and the jobs of a
// worker that died, are taken over by another worker (docs/decisions/0005-dead-workers.md).
import { Worker, workerSettings } from '../queue/worker.js';
import { webQueue } from '../provisioning/web/servers.repository.js';
import { buildJobs } from '../resources/jobs.js';
import { buildDrivers, closeDrivers } from '../provisioning/drivers.js';
import { startWebReconciler } from '../resources/subdomains/subdomains.reconcile.js';
import { startSftpLogins } from '../resources/ssh-keys/ssh-keys.logins.js';
import { startWebhookDispatcher } from '../resources/webhooks/webhooks.dispatcher.js';
import { runDaemon } from './daemon.js';

/** Loaded on demand by src/main.ts, like serve: the operator commands do not need this stack. */
export function runWorker(env: Record<string, string | undefined> = process.env): Promise<void> {
  return runDaemon('worker', env, async ({ config, store, log }) => {
    const drivers = buildDrivers({ config, store });
    // On a web server's host (--web-server, WEB_SERVER) only that server's jobs: their files and
    // daemons are here (docs/decisions/0008-web-servers.md).
    const queues = config.webServer ? { general: false, named: [webQueue(config.webServer)] } : { general: true, named: [] };
    const worker = new Worker({ store, jobs: buildJobs(), drivers, log, ...workerSettings(config), queues });
    await worker.start();
    const stopReconciler = config.webServer ? startWebReconciler({ store, web: drivers.web, name: config.webServer, log }) : null;
    // The SSH keys' last use: sshd's logins on this web server (decision 0023).
    const stopLogins = startSftpLogins({ config, store, log });
    // Webhook deliveries beside the general jobs, whose outcomes record them (decision 0027).
    const stopWebhooks = queues.general ? startWebhookDispatcher({ store, config, log: log.child({ component: 'webhooks' }) }) : null;
    return {
      stop: async (graceMs) => {
        await stopLogins?.();
        await stopWebhooks?.();
        await stopReconciler?.();
        await worker.stop({ graceMs });
        await closeDrivers(drivers);
      },
    };
  });
}
