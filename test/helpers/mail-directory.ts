// hostplane's mail directory in tests (docs/decisions/0009-mail-directory.md): the tables Dovecot and
// Postfix read (src/node/render; made by migration 008), seeded in a test store as hostplane's job commits
// write them — users with {BLF-CRYPT} hashes (bcryptjs, cost 10), application passwords as SHA-256
// rows, alias rows for forwards and a mailbox's forward_to, quotas. On PostgreSQL in the store's
// schema (its search_path), on SQLite in the store's file.
import crypto from 'node:crypto';
import bcrypt from 'bcryptjs';
import { sql } from 'kysely';
import type { Store } from '../../src/db/index.js';

/** The mail server the local stack registers (STACK_WEB_NAME's default): its Dovecot and Postfix read only rows of this server. */
export const STACK_SERVER = 'local';

/** A password as the mail directory stores it: '{BLF-CRYPT}$2b$10$…'. */
export async function blfCrypt(password: string): Promise<string> {
  return `{BLF-CRYPT}${await bcrypt.hash(password, 10)}`;
}

/** An application password's secret as stored: lower-case hex SHA-256. */
export function sha256Hex(secret: string): string {
  return crypto.createHash('sha256').update(secret, 'utf8').digest('hex');
}

export async function addDomain(store: Store, domain: string): Promise<void> {
  await sql`insert into mail_domains (domain, server) values (${domain}, ${STACK_SERVER})`.execute(store.db);
}

/** A mailbox: `addUser(store, { address: 'a@d.example', password: 'P', quotaBytes: 10 * 1024 * 1024 })`. */
export async function addUser(store: Store, u: { address: string; password: string; quotaBytes: number }): Promise<void> {
  const domain = u.address.slice(u.address.lastIndexOf('@') + 1);
  await sql`insert into mail_users (address, domain, password_hash, quota_bytes, active, server)
            values (${u.address}, ${domain}, ${await blfCrypt(u.password)}, ${u.quotaBytes}, 1, ${STACK_SERVER})`.execute(store.db);
}

export async function setPassword(store: Store, address: string, password: string): Promise<void> {
  await sql`update mail_users set password_hash = ${await blfCrypt(password)} where address = ${address}`.execute(store.db);
}

export async function removeUser(store: Store, address: string): Promise<void> {
  await sql`delete from mail_users where address = ${address}`.execute(store.db);
}

/** A new application password of `address`: its row id and the secret (128 bits, hex) a client logs in with. */
export async function addAppPassword(
  store: Store,
  address: string,
  meta: { device?: string; application?: string } = {},
): Promise<{ id: number; secret: string }> {
  const secret = crypto.randomBytes(16).toString('hex');
  const { id } = await store.db
    .insertInto('mail_app_passwords')
    .values({
      address,
      secret_sha256: sha256Hex(secret),
      device: meta.device ?? 'test device',
      application: meta.application ?? 'test client',
      created_at: new Date().toISOString(),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { id: Number(id), secret };
}

/** Marks a mailbox deleted as the API does at DELETE (`active = 0`): logins and deliveries stop, its row stays. */
export async function deactivateUser(store: Store, address: string): Promise<void> {
  await sql`update mail_users set active = 0 where address = ${address}`.execute(store.db);
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
    await sql`insert into mail_aliases (source, destination, server) values (${source}, ${destination}, ${STACK_SERVER})`.execute(store.db);
  }
}

export async function removeAliases(store: Store, source: string): Promise<void> {
  await sql`delete from mail_aliases where source = ${source}`.execute(store.db);
}
