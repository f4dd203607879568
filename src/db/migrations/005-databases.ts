// Database servers (operator data) and the databases on them (API guide "Databases").
// `database_servers.url` holds the admin credentials the driver connects with: it is never shown,
// logged or sent anywhere else. One default per (db_type, version) and "a dedicated server is never
// the default" are rules of the store itself (a partial unique index and a check, both engines).
import { sql, type Kysely } from 'kysely';
import { withIdColumn, type Engine } from '../dialect.js';

export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  await withIdColumn(engine, db.schema.createTable('database_servers'))
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('db_type', 'text', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('access_hosts', 'text', (c) => c.notNull().defaultTo('["%"]'))
    .addColumn('is_default', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('is_dedicated', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addCheckConstraint('database_servers_dedicated_not_default', sql`not (is_default = 1 and is_dedicated = 1)`)
    .execute();
  await db.schema
    .createIndex('database_servers_one_default')
    .unique()
    .on('database_servers')
    .columns(['db_type', 'version'])
    .where(sql.ref('is_default'), '=', 1)
    .execute();

  await withIdColumn(engine, db.schema.createTable('databases'))
    .addColumn('customer_id', 'integer', (c) => c.notNull().references('customers.id'))
    .addColumn('package_id', 'integer', (c) => c.notNull().references('packages.id'))
    .addColumn('server_name', 'text', (c) => c.notNull().references('database_servers.name'))
    .addColumn('db_type', 'text', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('usage_bytes', 'bigint')
    .addColumn('usage_updated_at', 'text')
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('databases_package').on('databases').column('package_id').execute();
  await db.schema.createIndex('databases_customer').on('databases').column('customer_id').execute();
  // The name is the MySQL user name too: unique per server (API guide "Databases").
  await db.schema.createIndex('databases_server_name').unique().on('databases').columns(['server_name', 'name']).execute();
}
