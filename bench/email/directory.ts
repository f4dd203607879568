// Step 2 of the mail bench: the directory at size — a small one and one of BENCH_MAIL_DIRECTORY
// mailboxes — its look-ups, their plans, and logins against it.
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { fmt } from '../report.js';
import type { Store } from '../../src/db/index.js';
import { blfCrypt } from '../../src/resources/email-addresses/email-addresses.service.js';
import { SMALL, DIRECTORY, CLIENTS, SECONDS, SAMPLE, CHEAP, LOOKUPS, DIR_DOMAINS, QUOTA_BYTES, BATCH, checkInterrupted } from './settings.js';
import { type LoadRun, loginLoad, loginEach } from './imap.js';
import { type Instance } from './instance.js';

/** The name up.sh registers its mail server under: its Dovecot reads only rows of that server. */
export const STACK_SERVER = 'local';
export const smallAddress = (i: number) => `s${i}@d${i % DIR_DOMAINS}.bench-dir.example`;
export const bulkAddress = (i: number) => `u${i}@d${i % DIR_DOMAINS}.bench-bulk.example`;

/** Rows `from` ≤ i < `to` of `address`, all with the one `hash`, in batches; their domains first. */
export async function insertRows(store: Store, address: (i: number) => string, from: number, to: number, hash: string): Promise<void> {
  const domainOf = (a: string) => a.slice(a.indexOf('@') + 1);
  const domains = [...new Set(Array.from({ length: Math.min(DIR_DOMAINS, to - from) }, (_, k) => domainOf(address(from + k))))];
  if (domains.length) await store.db.insertInto('mail_domains').values(domains.map((domain) => ({ domain, server: STACK_SERVER }))).onConflict((oc) => oc.column('domain').doNothing()).execute();
  for (let i = from; i < to; i += BATCH) {
    checkInterrupted();
    const rows = [];
    for (let j = i; j < Math.min(to, i + BATCH); j++) {
      const a = address(j);
      rows.push({ address: a, domain: domainOf(a), password_hash: hash, quota_bytes: QUOTA_BYTES, active: 1 as const, server: STACK_SERVER });
    }
    await store.db.insertInto('mail_users').values(rows).execute();
  }
}

export const mailboxCount = async (store: Store) => Number((await store.db.selectFrom('mail_users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

/** PostgreSQL: fresh statistics after a bulk change (as autovacuum would soon make them). */
export async function analyze(h: Instance): Promise<void> {
  if (h.engine === 'postgres') await sql`analyze mail_users`.execute(h.store.db);
}

/** `{SHA512-CRYPT}$6$…` of `password` (openssl passwd -6), or null without openssl. */
export function sha512Crypt(password: string): string | null {
  const r = spawnSync('openssl', ['passwd', '-6', '-stdin'], { input: `${password}\n`, encoding: 'utf8' });
  const hash = r.status === 0 ? r.stdout.trim() : '';
  return hash.startsWith('$6$') ? `{SHA512-CRYPT}${hash}` : null;
}

/**
 * The passdb's password_query (src/node/render/dovecot-sql.ts) for `addresses` in turn, `n`
 * times one after the other from this process: µs each, round trip included.
 */
export async function lookupTimes(h: Instance, addresses: string[], n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const a = addresses[i % addresses.length];
    const t = performance.now();
    const r = await sql`select address as "user", password_hash as password from mail_users where address = ${a} and active = 1`.execute(h.store.db);
    out.push((performance.now() - t) * 1000);
    if (r.rows.length !== 1) throw new Error(`the passdb query found ${r.rows.length} rows for ${a}`);
  }
  return out;
}

/** How the engine runs that query: `Index Scan using mail_users_pkey on mail_users` or SQLite's `SEARCH mail_users USING INDEX …`. */
export async function lookupPlan(h: Instance, address: string): Promise<string> {
  const q = sql`select address as "user", password_hash as password from mail_users where address = ${address} and active = 1`;
  if (h.engine === 'postgres') {
    const { rows } = await sql<{ 'QUERY PLAN': string }>`explain ${q}`.execute(h.store.db);
    return rows[0]['QUERY PLAN'].replace(/\s+\(cost=.*$/, '');
  }
  const { rows } = await sql<{ detail: string }>`explain query plan ${q}`.execute(h.store.db);
  return rows.map((r) => r.detail).join('; ');
}

/** The passdb query at one size of the directory. */
export interface Lookup {
  phase: string;
  mailboxes: number;
  us: number[];
  plan: string;
}

export interface DirectoryResult {
  runs: LoadRun[];
  lookups: Lookup[];
  /** Seconds to INSERT the bulk rows (and to DELETE them again). */
  insertS: number;
  deleteS: number;
  bulkRows: number;
  warmS: number;
}

export async function directoryRuns(h: Instance, log: (s: string) => void): Promise<DirectoryResult> {
  const password = crypto.randomBytes(15).toString('base64url');
  const hash = await blfCrypt(password);
  const small = Array.from({ length: SMALL }, (_, i) => smallAddress(i));
  const bulkRows = Math.max(0, DIRECTORY - SMALL);
  // Spread over the whole bulk: every (bulkRows / SAMPLE)-th row.
  const bulkSample = Array.from({ length: Math.min(SAMPLE, bulkRows) }, (_, k) => bulkAddress(Math.floor(((k + 0.5) * bulkRows) / Math.min(SAMPLE, bulkRows))));
  const smallSample = small.slice(0, Math.min(SAMPLE, SMALL));
  const maxClients = Math.max(...CLIENTS);
  const runs: LoadRun[] = [];
  const lookups: Lookup[] = [];
  const measure = async (phase: string, addresses: string[], scheme: string, clientsList: number[]) => {
    const mailboxes = await mailboxCount(h.store);
    if (phase !== 'cheap') {
      await lookupTimes(h, addresses, LOOKUPS / 10);
      lookups.push({ phase, mailboxes, us: await lookupTimes(h, addresses, LOOKUPS), plan: await lookupPlan(h, addresses[0]) });
    }
    for (const clients of clientsList) {
      const r = await loginLoad(h, addresses, password, clients, SECONDS);
      runs.push({ mailboxes, scheme, phase, ...r });
      log(`  ${h.engine} ${phase}: ${mailboxes} mailboxes, ${scheme}, ${clients} clients: ${fmt(r.ok / r.seconds, 1)} logins/s${r.failed ? `, ${r.failed} failed (${r.firstError})` : ''}`);
    }
  };

  await insertRows(h.store, smallAddress, 0, SMALL, hash);
  await analyze(h);
  let t = performance.now();
  await loginEach(h.imap, smallSample, password, maxClients);
  let warmS = (performance.now() - t) / 1000;
  await measure('A1', smallSample, 'BLF-CRYPT', CLIENTS);

  t = performance.now();
  await insertRows(h.store, bulkAddress, 0, bulkRows, hash);
  await analyze(h);
  const insertS = (performance.now() - t) / 1000;
  log(`  ${h.engine}: ${bulkRows} rows inserted in ${fmt(insertS, 1)} s`);
  t = performance.now();
  await loginEach(h.imap, bulkSample, password, maxClients);
  warmS += (performance.now() - t) / 1000;
  await measure('B', bulkSample, 'BLF-CRYPT', CLIENTS);

  t = performance.now();
  await h.store.db.deleteFrom('mail_users').where('domain', 'like', '%.bench-bulk.example').execute();
  await h.store.db.deleteFrom('mail_domains').where('domain', 'like', '%.bench-bulk.example').execute();
  await analyze(h);
  const deleteS = (performance.now() - t) / 1000;
  await measure('A2', smallSample, 'BLF-CRYPT', CLIENTS);

  if (CHEAP) {
    // The same addresses with a cheaper hash: what is left is IMAP, the processes, the SQL lookup.
    const cheap: [string, string | null][] = [['SHA512-CRYPT', sha512Crypt(password)], ['PLAIN', `{PLAIN}${password}`]];
    for (const [scheme, cheapHash] of cheap) {
      if (!cheapHash) {
        log(`  (${scheme} skipped: openssl passwd -6 did not work)`);
        continue;
      }
      await h.store.db.updateTable('mail_users').set({ password_hash: cheapHash }).where('domain', 'like', '%.bench-dir.example').execute();
      await measure('cheap', smallSample, scheme, [maxClients]);
    }
    await h.store.db.updateTable('mail_users').set({ password_hash: hash }).where('domain', 'like', '%.bench-dir.example').execute();
  }
  return { runs, lookups, insertS, deleteS, bulkRows, warmS };
}
