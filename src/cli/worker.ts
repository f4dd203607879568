// `hostplane worker`: the job worker alone, without the API (issue 3 item 2; docs/operator-guide.md
// "The worker"). Run as many as the load needs, on any machine that reaches the database; they
// share the jobs through leases. Handlers still running after the grace period are taken over by
// another worker once their lease expires.
import { Worker, workerSettings } from '../queue/worker.js';
import { buildHandlers } from '../queue/handlers.js';
import { runDaemon } from './daemon.js';

/** Loaded on demand by src/main.ts, like serve: the operator commands do not need this stack. */
export function runWorker(): Promise<void> {
  return runDaemon('worker', async ({ config, store, log }) => {
    const worker = new Worker({ store, handlers: buildHandlers({ config, store }), log, ...workerSettings(config) });
    await worker.start();
    return { stop: (graceMs) => worker.stop({ graceMs }) };
  });
}
