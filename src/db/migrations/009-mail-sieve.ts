// The mailboxes' Sieve scripts in the mail directory (API guide "E-mail addresses";
// docs/decisions/0011-antispam-and-autoresponder.md): Dovecot's Sieve plugin reads a mailbox's
// active script through its SQL dict at every delivery (src/node/render/dovecot23.ts, dovecot24.ts):
// `priv/sieve/name/active` → the script's `id`, then `priv/sieve/data/<id>` → its text. The id is
// the SHA-256 of the text: Dovecot keeps a compiled binary per id, so a changed script must get a
// new id (or the old binary runs on), and an unchanged one keeps it (no recompilation).
// `server`: the mail server of the row, as in the other mail directory tables.
// The index serves the rspamd settings map, which each mail server polls every few seconds for its
// addresses that are not in the default antispam mode (email-addresses.rspamd-settings.ts).
import type { Kysely } from 'kysely';
import type { Engine } from '../dialect.js';

export async function up(db: Kysely<any>, _engine: Engine): Promise<void> {
  await db.schema
    .createTable('mail_sieve')
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('script', 'text', (c) => c.notNull())
    .addColumn('server', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('mail_sieve_pk', ['address', 'name'])
    .execute();
  await db.schema.createIndex('email_addresses_server_antispam').on('email_addresses').columns(['mail_server_name', 'antispam']).execute();
}
