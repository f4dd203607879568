// hostplane's mail directory in tests (issue 10 item 3): the tables Dovecot and Postfix read
// (deploy/mail), created and seeded in a test store as hostplane's job commits will write them —
// users with {BLF-CRYPT} hashes (bcryptjs, cost 10), application passwords as SHA-256 rows, alias
// rows for forwards and a mailbox's forward_to, quotas. On PostgreSQL in the store's schema (its
// search_path), on SQLite in the store's file.
import crypto from 'node:crypto';
import bcrypt from 'bcryptjs';
import { sql } from 'kysely';
import type { Store } from '../../src/db/index.js';

/** The CREATE TABLE statements of each engine: the shape deploy/mail's queries read. */
export const MAIL_DIRECTORY_DDL: Record<Store['engine'], string[]> = {
  postgres: [
    'CREATE TABLE mail_domains (domain TEXT PRIMARY KEY)',
    `CREATE TABLE mail_users (address TEXT PRIMARY KEY, domain TEXT NOT NULL, password_hash TEXT NOT NULL,
       quota_bytes BIGINT NOT NULL, active INTEGER NOT NULL DEFAULT 1)`,
    'CREATE TABLE mail_app_passwords (id INTEGER PRIMARY KEY, address TEXT NOT NULL, secret_sha256 TEXT NOT NULL)',
    'CREATE TABLE mail_aliases (source TEXT NOT NULL, destination TEXT NOT NULL, PRIMARY KEY (source, destination))',
  ],
  sqlite: [
    'CREATE TABLE mail_domains (domain TEXT PRIMARY KEY)',
    `CREATE TABLE mail_users (address TEXT PRIMARY KEY, domain TEXT NOT NULL, password_hash TEXT NOT NULL,
       quota_bytes BIGINT NOT NULL, active INTEGER NOT NULL DEFAULT 1)`,
    'CREATE TABLE mail_app_passwords (id INTEGER PRIMARY KEY, address TEXT NOT NULL, secret_sha256 TEXT NOT NULL)',
    'CREATE TABLE mail_aliases (source TEXT NOT NULL, destination TEXT NOT NULL, PRIMARY KEY (source, destination))',
  ],
};

export async function createMailDirectory(store: Store): Promise<void> {
  for (const ddl of MAIL_DIRECTORY_DDL[store.engine]) await sql.raw(ddl).execute(store.db);
}

/** A password as the mail directory stores it: '{BLF-CRYPT}$2b$10$…'. */
export async function blfCrypt(password: string): Promise<string> {
  return `{BLF-CRYPT}${await bcrypt.hash(password, 10)}`;
}

/** An application password's secret as stored: lower-case hex SHA-256. */
export function sha256Hex(secret: string): string {
  return crypto.createHash('sha256').update(secret, 'utf8').digest('hex');
}

export async function addDomain(store: Store, domain: string): Promise<void> {
  await sql`insert into mail_domains (domain) values (${domain})`.execute(store.db);
}

/** A mailbox: `addUser(store, { address: 'a@d.example', password: 'P', quotaBytes: 10 * 1024 * 1024 })`. */
export async function addUser(store: Store, u: { address: string; password: string; quotaBytes: number }): Promise<void> {
  const domain = u.address.slice(u.address.lastIndexOf('@') + 1);
  await sql`insert into mail_users (address, domain, password_hash, quota_bytes, active)
            values (${u.address}, ${domain}, ${await blfCrypt(u.password)}, ${u.quotaBytes}, 1)`.execute(store.db);
}

export async function setPassword(store: Store, address: string, password: string): Promise<void> {
  await sql`update mail_users set password_hash = ${await blfCrypt(password)} where address = ${address}`.execute(store.db);
}

export async function removeUser(store: Store, address: string): Promise<void> {
  await sql`delete from mail_users where address = ${address}`.execute(store.db);
}

/** A new application password of `address`: its row id and the secret (128 bits, hex) a client logs in with. */
export async function addAppPassword(store: Store, address: string): Promise<{ id: number; secret: string }> {
  const secret = crypto.randomBytes(16).toString('hex');
  const { rows } = await sql<{ id: number | string }>`select coalesce(max(id), 0) + 1 as id from mail_app_passwords`.execute(store.db);
  const id = Number(rows[0].id);
  await sql`insert into mail_app_passwords (id, address, secret_sha256) values (${id}, ${address}, ${sha256Hex(secret)})`.execute(store.db);
  return { id, secret };
}

export async function removeAppPassword(store: Store, id: number): Promise<void> {
  await sql`delete from mail_app_passwords where id = ${id}`.execute(store.db);
}

/**
 * Alias rows source → each destination: a forward has only its targets; a mailbox with forward_to
 * has a row to itself too (`addAlias(store, 'c@d', ['c@d', 'a@d'])`) so it keeps a copy.
 */
export async function addAlias(store: Store, source: string, destinations: string | string[]): Promise<void> {
  for (const destination of [destinations].flat()) {
    await sql`insert into mail_aliases (source, destination) values (${source}, ${destination})`.execute(store.db);
  }
}

export async function removeAliases(store: Store, source: string): Promise<void> {
  await sql`delete from mail_aliases where source = ${source}`.execute(store.db);
}
