// The lifecycle of a long-running part started alone (`hostplane worker`, `hostplane dns`):
// settings, a logger like serve's, the store migrated, the part started, and a graceful stop on
// SIGINT/SIGTERM, also one that comes while it starts (src/cli/signals.ts; a second signal exits at once).
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { loadConfig, type Config } from '../config.js';
import type { Store } from '../db/index.js';
import { migrate } from '../db/migrate.js';
import { openConfiguredStore } from './context.js';
import { holdStopSignals } from './signals.js';

const SHUTDOWN_GRACE_MS = 10_000;

export interface Part {
  /** Stops the part; it may use up to `graceMs` to finish what it is doing. */
  stop(graceMs: number): Promise<void>;
}

/**
 * `await runDaemon('dns', process.env, ({ config, store, log }) => DnsServer.start(…))`: the part
 * runs until the process is signalled. Settings come from `env`.
 */
export async function runDaemon(
  component: string,
  env: Record<string, string | undefined>,
  start: (deps: { config: Config; store: Store; log: FastifyBaseLogger }) => Promise<Part>,
  check: (config: Config) => void = () => {},
): Promise<void> {
  const config = loadConfig(env);
  check(config);
  // pino, as `serve` logs through Fastify (the same JSON lines), without loading Fastify: a DNS
  // server or worker alone needs no HTTP framework in its memory.
  const log = pino({ level: config.logLevel }).child({ component }) as unknown as FastifyBaseLogger;
  const store = await openConfiguredStore(config, { longRunning: true });
  const signals = holdStopSignals();
  let part: Part;
  try {
    await migrate(store);
    part = await start({ config, store, log });
  } catch (err) {
    await store.close().catch(() => {});
    signals.release();
    throw err;
  }
  log.info({ database: store.where }, `hostplane ${component} ready`);

  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      log.error('graceful shutdown took too long; exiting');
      process.exit(1);
    }, SHUTDOWN_GRACE_MS + 2_000);
    force.unref();
    await part.stop(SHUTDOWN_GRACE_MS);
    await store.close().catch(() => {});
    process.exit(0);
  };
  signals.started(stop);
}
