// Builds an app on a fresh database: a new SQLite file always, a new PostgreSQL schema when
// TEST_DATABASE_URL is set. Every HTTP suite runs once per engine with `describe.each(ENGINES)`.
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import crypto from 'node:crypto';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { sql } from 'kysely';
import { buildApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { openStore, type Store } from '../../src/db/index.js';
import { migrate } from '../../src/db/migrate.js';
import { MemoryLimiter, type Limiter } from '../../src/limits/limiter.js';
import { buildAdmin, type Admin } from '../../src/admin/index.js';
import { serviceDeps } from '../../src/resources/service-deps.js';
import { Worker, workerSettings } from '../../src/queue/worker.js';
import { buildJobs } from '../../src/resources/jobs.js';
import { buildDrivers, closeDrivers, type Drivers } from '../../src/provisioning/drivers.js';
import { DnsServer } from '../../src/dns/server.js';
import { startWebReconciler } from '../../src/resources/subdomains/subdomains.reconcile.js';

export type EngineName = 'sqlite' | 'postgres';
export const ENGINES: EngineName[] = process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];

export const BASE = 'http://api.test';

/** Settings for tests: limits out of the way unless a test lowers them. */
export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    PUBLIC_BASE_URL: BASE,
    RATE_LIMIT_MAX: '1000000',
    ERROR_BLOCK_MAX: '1000000',
    LOG_LEVEL: 'silent',
    DNS_LISTEN: 'off',
    ...env,
  });
}

export interface TestStore {
  store: Store;
  url: string;
  schema?: string;
  drop(): Promise<void>;
}

/** The DATABASE_URL another process (the CLI, `hostplane worker`) reaches this test store with. */
export function processUrl(ts: TestStore): string {
  if (!ts.schema) return ts.url;
  const u = new URL(ts.url);
  u.searchParams.set('schema', ts.schema);
  return u.toString();
}

/** A fresh database of `engine`, migrated unless `migrated: false`. */
export async function freshStore(engine: EngineName, { migrated = true, poolSize = 5 } = {}): Promise<TestStore> {
  if (engine === 'postgres') {
    const url = process.env.TEST_DATABASE_URL!;
    const schema = `t_${crypto.randomBytes(6).toString('hex')}`;
    const store = await openStore(url, { schema, poolSize });
    if (migrated) await migrate(store);
    return {
      store,
      url,
      schema,
      async drop() {
        await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(store.db).catch(() => {});
        await store.close();
      },
    };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostplane-test-'));
  const url = path.join(dir, 'test.db');
  const store = await openStore(url);
  if (migrated) await migrate(store);
  return {
    store,
    url,
    async drop() {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface TestApp {
  app: FastifyInstance;
  store: Store;
  admin: Admin;
  config: Config;
  limiter: Limiter;
  /** The job worker of this app's store, when asked for with `{ worker: true }`. */
  worker: Worker | null;
  /** The DNS server of this app's store on 127.0.0.1 (port in `dns.port`), when asked for with `{ dns: true }`. */
  dns: DnsServer | null;
  /** The drivers job runs get, built from `env` as `serve` builds them. */
  drivers: Drivers;
  close(): Promise<void>;
}

export async function createTestApp(
  engine: EngineName,
  env: Record<string, string> = {},
  opts: { limiter?: Limiter; logStream?: NodeJS.WritableStream; store?: TestStore; worker?: boolean; dns?: boolean; reconcileMs?: number; now?: () => Date; panelDir?: string } = {},
): Promise<TestApp> {
  const config = testConfig(env);
  const ts = opts.store ?? (await freshStore(engine));
  const limiter = opts.limiter ?? new MemoryLimiter(config);
  const app = await buildApp(config, { store: ts.store, limiter, logStream: opts.logStream, now: opts.now, panelDir: opts.panelDir });
  await app.ready();
  // Started before the worker, as under `serve`: DNS jobs wait for a live DNS server.
  const dns = opts.dns ? await DnsServer.start({ store: ts.store, config, log: app.log, listen: '127.0.0.1:0' }) : null;
  // Jobs run as under `serve`: the application's job definitions and drivers, settings from `env` (JOB_*).
  const drivers = buildDrivers({ config, store: ts.store });
  const worker = opts.worker
    ? new Worker({ store: ts.store, jobs: buildJobs(), drivers, log: app.log, ...workerSettings(config) })
    : null;
  await worker?.start();
  // As under `serve` with WEB_SERVER: the web server is held to its desired state between jobs.
  const stopReconciler = worker && config.webServer
    ? startWebReconciler({ store: ts.store, web: drivers.web, name: config.webServer, log: app.log, everyMs: opts.reconcileMs })
    : null;
  return {
    app,
    store: ts.store,
    admin: buildAdmin(serviceDeps(ts.store, config)),
    config,
    limiter,
    worker,
    dns,
    drivers,
    async close() {
      await stopReconciler?.();
      await worker?.stop();
      await dns?.stop();
      await closeDrivers(drivers);
      await app.close();
      await limiter.close();
      if (!opts.store) await ts.drop();
    },
  };
}

/** Sends a request as a client would: `call(app, 'GET', '/customers', { token })`. */
export async function call(
  app: FastifyInstance,
  method: InjectOptions['method'],
  url: string,
  o: { token?: string; body?: unknown; headers?: Record<string, string>; remoteAddress?: string } = {},
) {
  const headers: Record<string, string> = { ...(o.headers ?? {}) };
  if (o.token) headers.authorization = `token ${o.token}`;
  let payload: string | undefined;
  if (o.body !== undefined) {
    payload = typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
    headers['content-type'] ??= 'application/vnd.api+json';
  }
  const res = await app.inject({ method, url, headers, payload, remoteAddress: o.remoteAddress });
  let json: any;
  try {
    json = res.body ? JSON.parse(res.body) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers, body: res.body, json };
}
