// Web servers (operator data), the subdomains on them and what they need elsewhere (API guide
// "Subdomains"; docs/decisions/0008-web-servers.md):
// - `web_servers`: Caddy's admin URL, listen addresses, the IPs DNS serves, the home root, the
//   state dir and the installed PHP versions (JSON object version → php-fpm binary). One default.
// - `packages.web_server_name`: where a package's sites are; fixed at its first subdomain.
// - `subdomains`: one row per subdomain; `redirect_target` null on a redirect = uninitialized;
//   `webspace_root` the directory its job checked (realpath inside the home): only that is served.
// - `dns_records.subdomain_id`: the base records a subdomain owns (they go with it, and a plan's
//   base-record reset leaves them alone).
// - `queue_jobs.queue`: `web:<server>` for the jobs only that server's worker may run; null for all others.
import { sql, type Kysely } from 'kysely';
import { withIdColumn, type Engine } from '../dialect.js';

export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  await withIdColumn(engine, db.schema.createTable('web_servers'))
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('caddy_admin', 'text', (c) => c.notNull())
    .addColumn('http_listen', 'text', (c) => c.notNull())
    .addColumn('https_listen', 'text')
    .addColumn('addresses', 'text', (c) => c.notNull())
    .addColumn('home_root', 'text', (c) => c.notNull())
    .addColumn('state_dir', 'text', (c) => c.notNull())
    .addColumn('php', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('socket_group', 'text')
    .addColumn('is_default', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('web_servers_one_default').unique().on('web_servers').column('is_default').where(sql.ref('is_default'), '=', 1).execute();

  await db.schema.alterTable('packages').addColumn('web_server_name', 'text', (c) => c.references('web_servers.name')).execute();

  await withIdColumn(engine, db.schema.createTable('subdomains'))
    .addColumn('customer_id', 'integer', (c) => c.notNull().references('customers.id'))
    .addColumn('package_id', 'integer', (c) => c.notNull().references('packages.id'))
    .addColumn('domain', 'text', (c) => c.notNull().references('domains.name'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('webspace_path', 'text')
    .addColumn('php_version', 'text')
    .addColumn('webspace_https', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('webspace_root', 'text')
    .addColumn('redirect_target', 'text')
    .addColumn('redirect_dynamic', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('redirect_https', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('subdomains_name').unique().on('subdomains').columns(['domain', 'name']).execute();
  await db.schema.createIndex('subdomains_package').on('subdomains').column('package_id').execute();
  await db.schema.createIndex('subdomains_customer').on('subdomains').column('customer_id').execute();

  await db.schema.alterTable('dns_records').addColumn('subdomain_id', 'integer').execute();
  await db.schema.createIndex('dns_records_subdomain').on('dns_records').column('subdomain_id').execute();

  await db.schema.alterTable('queue_jobs').addColumn('queue', 'text').execute();
}
