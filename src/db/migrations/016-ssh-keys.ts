// SSH keys of packages (API guide "SSH keys"; docs/decisions/0024-ssh-keys.md): the public keys a
// package's Linux user logs in with over SFTP, written by the web worker to the key file sshd reads
// on the package's web server.
// - `ssh_keys`: one row per key; `public_key` as the customer sent it, normalised to
//   `<algorithm> <base64> [comment]`; `fingerprint` `SHA256:…` as `ssh-keygen -l` prints it, unique
//   per package. `state`: `pending` (on its way to the key file), `live`, `deleting`.
// - `plans.ssh_keys_per_package`: how many keys a package may hold (10 for every existing plan).
// - `web_servers.sftp_host` / `sftp_port`: where customers connect for SFTP; a null host means the
//   server's first address, and every existing server gets port 22.
import type { Kysely } from 'kysely';
import { withIdColumn, type Engine } from '../dialect.js';

export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  await withIdColumn(engine, db.schema.createTable('ssh_keys'))
    .addColumn('customer_id', 'integer', (c) => c.notNull().references('customers.id'))
    .addColumn('package_id', 'integer', (c) => c.notNull().references('packages.id'))
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('algorithm', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text')
    .execute();
  // A key once per package: the duplicate check of a POST holds under the package lock, this in any case.
  await db.schema.createIndex('ssh_keys_fingerprint').unique().on('ssh_keys').columns(['package_id', 'fingerprint']).execute();
  await db.schema.createIndex('ssh_keys_customer').on('ssh_keys').column('customer_id').execute();

  await db.schema.alterTable('plans').addColumn('ssh_keys_per_package', 'integer', (c) => c.notNull().defaultTo(10)).execute();
  await db.schema.alterTable('web_servers').addColumn('sftp_host', 'text').execute();
  await db.schema.alterTable('web_servers').addColumn('sftp_port', 'integer', (c) => c.notNull().defaultTo(22)).execute();
}
