// E-mail addresses, application passwords, the mail servers and the mail directory they read
// (API guide "E-mail addresses", "Password rules"; docs/decisions/0009-mail-directory.md):
// - `mail_servers`: operator data; `doveadm_key` is a secret (never shown or logged). One default.
// - `packages.mail_server_name`: where a package's mailboxes live; fixed at its first address.
// - `contacts.portal_password_hash`: the customer-portal password (scrypt), for the customer-portal
//   rule (API guide "Password rules").
// - `email_addresses`: the API's rows (address in ACE with the local part lower-cased).
// - The mail directory, written in the same transaction as every change and read by Dovecot and
//   Postfix (src/node/render): `mail_domains`, `mail_users` ({BLF-CRYPT} hash, quota, active),
//   `mail_app_passwords` (SHA-256 of the secret; device, application, created_at for the API) and
//   `mail_aliases` (forwards, and a mailbox's forward_to with a row to itself).
import { sql, type Kysely } from 'kysely';
import { withIdColumn, type Engine } from '../dialect.js';

export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  await withIdColumn(engine, db.schema.createTable('mail_servers'))
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('doveadm_url', 'text', (c) => c.notNull())
    .addColumn('doveadm_key', 'text', (c) => c.notNull())
    .addColumn('smtp', 'text', (c) => c.notNull())
    .addColumn('imap', 'text', (c) => c.notNull())
    .addColumn('is_default', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('mail_servers_one_default').unique().on('mail_servers').column('is_default').where(sql.ref('is_default'), '=', 1).execute();

  await db.schema.alterTable('packages').addColumn('mail_server_name', 'text', (c) => c.references('mail_servers.name')).execute();
  await db.schema.alterTable('contacts').addColumn('portal_password_hash', 'text').execute();

  await withIdColumn(engine, db.schema.createTable('email_addresses'))
    .addColumn('customer_id', 'integer', (c) => c.notNull().references('customers.id'))
    .addColumn('package_id', 'integer', (c) => c.notNull().references('packages.id'))
    .addColumn('mail_server_name', 'text', (c) => c.notNull().references('mail_servers.name'))
    .addColumn('address', 'text', (c) => c.notNull().unique())
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('zone', 'text', (c) => c.notNull().references('domains.name'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('antispam', 'text', (c) => c.notNull())
    .addColumn('forward_to', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('autoresponder_text', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('autoresponder_active', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('autoresponder_activates', 'text')
    .addColumn('autoresponder_expires', 'text')
    .addColumn('quota_bytes', 'bigint')
    .addColumn('used_bytes', 'bigint')
    .addColumn('usage_updated_at', 'text')
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('email_addresses_package').on('email_addresses').column('package_id').execute();
  await db.schema.createIndex('email_addresses_customer').on('email_addresses').column('customer_id').execute();
  await db.schema.createIndex('email_addresses_domain').on('email_addresses').column('domain').execute();

  // The mail directory. Keys are what Dovecot and Postfix look up (the address, the domain).
  // `server`: the mail server (mail_servers.name) that serves the row; each server's Dovecot and
  // Postfix read only their own rows, so an address lives on its package's server alone.
  await db.schema
    .createTable('mail_domains')
    .addColumn('domain', 'text', (c) => c.primaryKey())
    .addColumn('server', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('mail_users')
    .addColumn('address', 'text', (c) => c.primaryKey())
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('quota_bytes', 'bigint', (c) => c.notNull())
    .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('server', 'text', (c) => c.notNull())
    .execute();
  await withIdColumn(engine, db.schema.createTable('mail_app_passwords'))
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('secret_sha256', 'text', (c) => c.notNull())
    .addColumn('device', 'text', (c) => c.notNull())
    .addColumn('application', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text')
    .execute();
  await db.schema.createIndex('mail_app_passwords_address').on('mail_app_passwords').columns(['address', 'secret_sha256']).execute();
  await db.schema
    .createTable('mail_aliases')
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('destination', 'text', (c) => c.notNull())
    .addColumn('server', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('mail_aliases_pk', ['source', 'destination'])
    .execute();
}
