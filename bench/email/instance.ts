// A hostplane instance of the mail bench: the local stack (deploy/local/up.sh) with Dovecot and
// Postfix, an app and a worker on the engine's store, and a mail driver that notes when each
// address reached the directory.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
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
import type { MailDriver } from '../../src/provisioning/mail/driver.js';
import { CREATES, WARMUP, DOMAIN, type EngineName, stacks } from './settings.js';

/** up.sh on a free port-base, Dovecot reporting logins to `hostplaneUrl`: the stack's IMAP address. */
export async function stackUp(dir: string, databaseUrl: string, hostplaneUrl: string): Promise<string> {
  const { run } = await stacks.up(dir, { DATABASE_URL: databaseUrl, HOSTPLANE_URL: hostplaneUrl });
  const stack = JSON.parse(fs.readFileSync(path.join(dir, 'stack.json'), 'utf8')) as { mail?: { imap: string } };
  if (!stack.mail) {
    const why = /Mail +not started: (.*)/.exec(run.stdout)?.[1] ?? 'see its output';
    throw new Error(`up.sh started no mail servers: ${why}`);
  }
  return stack.mail.imap;
}


// ---- the instance ------------------------------------------------------------------------------

export interface Instance {
  engine: EngineName;
  store: Store;
  config: Config;
  app: FastifyInstance;
  base: string;
  imap: string;
  /** Dovecot's master process (its CPU times cover the processes it started). */
  dovecotPid: number;
  /** PostgreSQL: the read-only role Dovecot and Postfix connect as; null on SQLite. */
  reader: string | null;
  token: string;
  /** When the job's doveadm lookup first found each address (performance.now()). */
  found: Map<string, number>;
  close(): Promise<void>;
}

/** The mail driver as the worker uses it, with the time its `authenticates` first said yes noted. */
export function timedMail(inner: MailDriver, found: Map<string, number>): MailDriver {
  return {
    ...inner,
    async authenticates(server, address) {
      const ok = await inner.authenticates(server, address);
      if (ok && !found.has(address)) found.set(address, performance.now());
      return ok;
    },
  };
}

/** The read-only role up.sh makes on PostgreSQL for the store's schema (deploy/local/up.sh `reader`). */
export function readerRole(databaseUrl: string, schema: string): string {
  const name = `hostplane_mail_${decodeURIComponent(new URL(databaseUrl).pathname.slice(1))}_${schema}`.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  if (name.length <= 63) return name;
  return `${name.slice(0, 54)}_${crypto.createHash('sha256').update(name).digest('hex').slice(0, 8)}`;
}

/**
 * As `serve` builds it (src/cli/serve.ts), on the free port Dovecot reports logins to: the app,
 * then the worker with the application's jobs and drivers and the JOB_* defaults. The stack is up
 * and registered, the customer's package and domain made.
 */
export async function startInstance(engine: EngineName, root: string): Promise<Instance> {
  const { store, databaseUrl, drop } = await freshBenchStore(engine, PG_URL);
  const stackDir = path.join(root, engine);
  let limiter: MemoryLimiter | null = null;
  let app: FastifyInstance | null = null;
  let drivers: Drivers | null = null;
  let worker: Worker | null = null;
  let schema: string | null = null;
  // Whatever was started, in reverse; the worker first, so no job asks a stopped Dovecot.
  const close = async () => {
    await worker?.stop();
    if (drivers) await closeDrivers(drivers);
    await app?.close();
    await limiter?.close();
    if (stacks.has(stackDir)) await stacks.down(stackDir);
    if (schema) {
      // Dovecot and Postfix are gone, so are their sessions: the role up.sh made can go.
      const reader = readerRole(databaseUrl, schema);
      await sql`drop owned by ${sql.id(reader)}`.execute(store.db).catch(() => undefined);
      await sql`drop role if exists ${sql.id(reader)}`.execute(store.db).catch((e) => console.error(`drop role ${reader}: ${(e as Error).message}`));
    }
    await drop();
  };
  try {
    // The CLI up.sh runs reaches this store: the schema of a PostgreSQL store goes into its URL.
    let processUrl: string;
    ({ url: processUrl, schema } = await processUrlOf(store, databaseUrl));
    // Dovecot reports every login to the app (application passwords' last_used_at): it listens there.
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const imap = await stackUp(stackDir, processUrl, base);

      const config = benchConfig(databaseUrl, base);
    limiter = new MemoryLimiter(config);
    app = await buildApp(config, { store, limiter, logStream: discard() });
    await app.listen({ host: '127.0.0.1', port });

    const admin = buildAdmin(serviceDeps(store, config));
    const { customerId, contactId } = await admin.customers.createCustomer({ organization: 'Bench AG', contact: { name: 'bench', email: 'admin@bench.example', phone: '+49 30 1234567' } });
    const { planId } = await admin.packages.createPlan({ name: 'bench plan', maxEmailAddresses: 2 * (CREATES + WARMUP) + 10 });
    const { packageId } = await admin.packages.createPackage({ customerId, planId, name: 'bench', linuxUser: 'mail_bench' });
    await admin.domains.createDomain({ name: DOMAIN, customerId, packageId, registered: true });
    const { token } = await admin.customers.issueToken(contactId, 'bench');

    const built = buildDrivers({ config, store });
    const found = new Map<string, number>();
    drivers = { ...built, mail: timedMail(built.mail, found) };
    worker = new Worker({ store, jobs: buildJobs(), drivers, log: app.log, ...workerSettings(config) });
    await worker.start();
    const dovecotPid = Number(fs.readFileSync(path.join(stackDir, 'mail', 'run', 'master.pid'), 'utf8').trim());
    const reader = schema ? readerRole(databaseUrl, schema) : null;
    return { engine, store, config, app, base, imap, dovecotPid, reader, token, found, close };
  } catch (err) {
    await close().catch((e) => console.error(`cleanup after a failed start: ${(e as Error).message}`));
    throw err;
  }
}
