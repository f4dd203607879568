// What the HTTP tests of /email-addresses share (rules.test.ts, changes.test.ts): an app on a fresh
// database of its own with the standard tenants and a placeholder mail server (no worker: jobs stay
// pending), the mail directory an address leaves, and every plaintext password the suite saw, which
// no table or job payload may hold.
import bcrypt from 'bcryptjs';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect } from 'vitest';
import { createTestApp, freshStore, processUrl, type EngineName, type TestApp } from './app.js';
import { placeholderMailServer, postEmail } from './email.js';
import { filledLater } from './suite.js';
import { seedTenants, type Tenants } from './tenants.js';

export function useEmailSuite(engine: EngineName) {
  const t = filledLater<TestApp>();
  const x = filledLater<Tenants>();
  /** The database's URL, for the CLI. */
  const store = { databaseUrl: '' };
  let dropStore: () => Promise<void> = async () => {};
  /** Every plaintext password this suite saw: none may be stored anywhere (expectNoPlaintext, last). */
  const secrets: string[] = [];
  const token = () => x.end1.token;
  const domain = () => x.end1.domain;
  let n = 0;
  const local = () => `box${++n}`;

  beforeAll(async () => {
    const ts = await freshStore(engine);
    store.databaseUrl = processUrl(ts);
    dropStore = () => ts.drop();
    Object.assign(t, await createTestApp(engine, {}, { store: ts }));
    Object.assign(x, await seedTenants(t.admin));
    await placeholderMailServer(t.store);
  });
  afterAll(async () => {
    await t.close?.();
    await dropStore();
  });

  const directory = async (address: string) => ({
    user: await t.store.db.selectFrom('mail_users').selectAll().where('address', '=', address).executeTakeFirst(),
    aliases: (await t.store.db.selectFrom('mail_aliases').select('destination').where('source', '=', address).orderBy('destination').execute()).map((r) => r.destination),
    domain: await t.store.db.selectFrom('mail_domains').selectAll().where('domain', '=', address.split('@')[1]).executeTakeFirst(),
  });
  const verifies = async (address: string, password: string) => {
    const hash = (await directory(address)).user!.password_hash;
    expect(hash).toMatch(/^\{BLF-CRYPT\}\$2[aby]\$10\$/);
    return bcrypt.compare(password, hash.slice('{BLF-CRYPT}'.length));
  };
  const mailbox = async (attributes: Record<string, unknown> = {}) => {
    const r = await postEmail(t, token(), { address: `${local()}@${domain()}`, address_type: 'mailbox', ...attributes });
    expect(r.status, r.body).toBe(202);
    if (r.json.data.attributes.password) secrets.push(r.json.data.attributes.password);
    return r;
  };

  /** No secret of `secrets` in any table an address writes to, nor in a job's payload. */
  async function expectNoPlaintext(more: string[] = []) {
    const tables = ['email_addresses', 'mail_users', 'mail_app_passwords', 'mail_aliases', 'queue_jobs', 'contacts'];
    for (const table of tables) {
      const rows = (await sql.raw(`select * from ${table}`).execute(t.store.db)).rows;
      const text = JSON.stringify(rows);
      for (const s of [...secrets, ...more]) expect(text.includes(s), `${s} in ${table}`).toBe(false);
    }
  }

  return { t, x, store, secrets, token, domain, local, directory, verifies, mailbox, expectNoPlaintext };
}
