// Panel sessions and two-factor logins (API guide "Panel sessions (extension)";
// docs/decisions/0030-panel-sessions.md).
// - `panel_sessions`: one row per logged-in browser. `session_hash` is the SHA-256 of the cookie's
//   value (the value itself is never stored); `expires_at` the hard end (login + PANEL_SESSION_MAX_S)
//   and `idle_timeout_s` the idle limit, both as in force at login, so reads and the purge job need
//   no settings; `last_used_at` moves at most once a minute. Deleting the contact deletes its sessions.
// - `contact_totp`: a contact's TOTP secret, sealed like webhook secrets; `enabled` 0 while the
//   enrolment waits for its first code; `last_step` the time step of the last code accepted (a code
//   is never accepted twice).
// - `contact_recovery_codes`: the ten recovery codes of an enabled TOTP, scrypt-hashed; `used_at`
//   set when one is spent.
// - `contacts_email_lower`: the login finds a contact by its address, ignoring case.
import { sql, type Kysely } from 'kysely';
import { withIdColumn, type Engine } from '../dialect.js';

export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  await withIdColumn(engine, db.schema.createTable('panel_sessions'))
    .addColumn('session_hash', 'text', (c) => c.notNull().unique())
    .addColumn('contact_id', 'integer', (c) => c.notNull().references('contacts.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('idle_timeout_s', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('panel_sessions_contact').on('panel_sessions').column('contact_id').execute();
  await db.schema.createIndex('panel_sessions_expires').on('panel_sessions').column('expires_at').execute();

  await db.schema
    .createTable('contact_totp')
    .addColumn('contact_id', 'integer', (c) => c.primaryKey().references('contacts.id').onDelete('cascade'))
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('last_step', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await withIdColumn(engine, db.schema.createTable('contact_recovery_codes'))
    .addColumn('contact_id', 'integer', (c) => c.notNull().references('contacts.id').onDelete('cascade'))
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('used_at', 'text')
    .execute();
  await db.schema.createIndex('contact_recovery_codes_contact').on('contact_recovery_codes').column('contact_id').execute();

  await sql`create index contacts_email_lower on contacts (lower(email))`.execute(db);
}
