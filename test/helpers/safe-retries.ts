// What the safe-retries tests share (API guide "Safe retries"): one object of every kind an end
// customer changes, the requests a client sends with an Idempotency-Key or a condition, other
// instances on the same store, and the store's view of the keys.
import crypto from 'node:crypto';
import { expect } from 'vitest';
import { openStore } from '../../src/db/index.js';
import { BASE, call, createTestApp, type EngineName, type TestApp, type TestStore } from './app.js';
import { newKey } from './ssh-keys.js';
import type { Tenant } from './tenants.js';

/** A JSON:API create document. */
export const createDoc = (type: string, attributes: Record<string, unknown>) => ({ data: { type, attributes } });
/** A JSON:API update document for `type` `id`. */
export const updateDoc = (type: string, id: string, attributes: Record<string, unknown>) => ({ data: { type, id, attributes } });

/** The body of POST /dns-records for a TXT record `name` in `domain`. */
export const txtRecord = (domain: string, name: string, data = 'v') => createDoc('dns-record', { domain, name, record_type: 'TXT', data, ttl: 300 });

/** Sends `body` with an Idempotency-Key (raw header value) and any other headers. */
export const withKey = (t: TestApp, method: 'POST' | 'PATCH' | 'DELETE', url: string, token: string, key: string, body?: unknown, headers: Record<string, string> = {}) =>
  call(t.app, method, url, { token, body, headers: { 'idempotency-key': key, ...headers } });

/** A fresh key, as a client makes one. */
export const freshKey = () => crypto.randomUUID();

/** The objects of `tenant` the tests change, one of each kind, by id. */
export interface Objects {
  dnsRecord: string;
  database: string;
  subdomain: string;
  email: string;
  sshKey: string;
  /** The job of the DNS record's creation (GET /queue-jobs/{id}). */
  job: string;
}

/** Creates one object of each kind for `tenant` (202 each; nothing runs their jobs). */
export async function createObjects(t: TestApp, tenant: Tenant, label = 'x'): Promise<Objects> {
  const post = async (url: string, body: unknown) => {
    const r = await call(t.app, 'POST', url, { token: tenant.token, body });
    expect(r.status, `${url}: ${r.body}`).toBe(202);
    return r;
  };
  const record = await post('/dns-records', txtRecord(tenant.domain, `_${label}`));
  const database = await post('/databases', createDoc('database', { package_id: tenant.packageId, db_type: 'mariadb', version: '10.11' }));
  const subdomain = await post('/subdomains', createDoc('subdomain', { subdomain_type: 'email', domain: tenant.domain, subdomain: `lists-${label}` }));
  const email = await post('/email-addresses', createDoc('email-address', { address: `box-${label}@${tenant.domain}`, address_type: 'mailbox' }));
  const sshKey = await post('/ssh-keys', createDoc('ssh-key', { package_id: tenant.packageId, public_key: newKey('ed25519', `${label}@test`).line }));
  return {
    dnsRecord: String(record.json.data.links['dns-record']).slice(`${BASE}/dns-records/`.length),
    job: record.json.data.id,
    database: database.json.data.id,
    subdomain: subdomain.json.data.id,
    email: email.json.data.id,
    sshKey: sshKey.json.data.id,
  };
}

/** The rows of idempotency_keys, oldest first, once the answers sent so far are stored. */
export async function storedKeys(t: TestApp) {
  await t.app.idempotencyKeys.settled();
  return t.store.db.selectFrom('idempotency_keys').select(['scope', 'idempotency_key', 'status', 'expires_at']).orderBy('created_at').execute();
}

/** How many rows `table` has. */
export async function countOf(t: TestApp, table: 'queue_jobs' | 'dns_records' | 'idempotency_keys'): Promise<number> {
  // Answers are stored within 50 ms of going out (src/db/write-batches.ts): the store as it is once they are.
  await t.app.idempotencyKeys.settled();
  const { n } = await t.store.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(n);
}

/**
 * Another API server on the database of `ts`, with a connection (SQLite) or pool (PostgreSQL) of
 * its own, as a second instance or a restarted one has; its close() closes that connection too.
 */
export async function otherInstance(engine: EngineName, ts: TestStore, env: Record<string, string> = {}, opts: Parameters<typeof createTestApp>[2] = {}): Promise<TestApp> {
  const own = await openStore(ts.url, { schema: ts.schema, poolSize: 2 });
  const app = await createTestApp(engine, env, { ...opts, store: { store: own, url: ts.url, schema: ts.schema, drop: () => own.close() } });
  return {
    ...app,
    async close() {
      await app.close();
      await own.close();
    },
  };
}

/** The parts of an answer a replay repeats: status, body, and the headers but those of the exchange itself. */
export function answerOf(r: { status: number; headers: Record<string, unknown>; body: string }) {
  const headers = Object.fromEntries(Object.entries(r.headers).filter(([name]) => !/^(x-request-id|date|connection|keep-alive|ratelimit-.*)$/i.test(name)));
  return { status: r.status, headers, body: r.body };
}
