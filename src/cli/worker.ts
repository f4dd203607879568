// `hostplane worker`: the job worker alone, without the API (issue 3 item 2; docs/operator-guide.md
// "The worker"). Run as many as the load needs, on any machine that reaches the database; they
// share the jobs through leases. Handlers still running after the grace period, and the jobs of a
// worker that died, are taken over by another worker (docs/decisions/0005-dead-workers.md).
import { Worker, workerSettings } from '../queue/worker.js';
import { buildJobs } from '../resources/jobs.js';
import { buildDrivers, closeDrivers } from '../provisioning/drivers.js';
import { runDaemon } from './daemon.js';

/** Loaded on demand by src/main.ts, like serve: the operator commands do not need this stack. */
export function runWorker(env: Record<string, string | undefined> = process.env): Promise<void> {
  return runDaemon('worker', env, async ({ config, store, log }) => {
    const drivers = buildDrivers({ config, store });
    const worker = new Worker({ store, jobs: buildJobs(), drivers, log, ...workerSettings(config) });
    await worker.start();
    return {
      stop: async (graceMs) => {
        await worker.stop({ graceMs });
        await closeDrivers(drivers);
      },
    };
  });
}
