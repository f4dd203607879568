// Every job handler of the application, registered by (job_type, action) (spec §3.1; DESIGN
// "Jobs are rows"). `serve`, `hostplane worker` and the test helper all take their registry from
// here, so a job enqueued by any process is understood by every worker.
import type { Config } from '../config.js';
import type { Store } from '../db/index.js';
import { HandlerRegistry } from './types.js';
import { registerDnsRecordHandlers } from '../resources/dns-records/dns-records.jobs.js';

/** What handlers may need besides their JobContext. */
export interface HandlerDeps {
  config: Config;
  store: Store;
}

/**
 * `const handlers = buildHandlers({ config, store })`. A job whose (job_type, action) has no handler
 * here is marked failed by the worker.
 */
export function buildHandlers(deps: HandlerDeps): HandlerRegistry {
  const handlers = new HandlerRegistry();
  registerDnsRecordHandlers(handlers, deps.config);

  return handlers;
}
