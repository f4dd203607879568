// Customers, contacts, tokens, plans, packages, domains and queue jobs.
import type { Kysely } from 'kysely';
import { startIdsAt, withIdColumn, type Engine } from '../dialect.js';

export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  await withIdColumn(engine, db.schema.createTable('customers'))
    .addColumn('reseller_id', 'integer', (c) => c.references('customers.id'))
    .addColumn('is_reseller', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('organization', 'text')
    .addColumn('is_login_disabled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('external_customer_id', 'text')
    .addColumn('legacy_password_hash', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('customers_reseller').on('customers').column('reseller_id').execute();
  await db.schema
    .createIndex('customers_external_id')
    .unique()
    .on('customers')
    .columns(['reseller_id', 'external_customer_id'])
    .execute();
  await startIdsAt(engine, db, 'customers', 10001);

  await withIdColumn(engine, db.schema.createTable('contacts'))
    .addColumn('customer_id', 'integer', (c) => c.notNull().references('customers.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('phone', 'text')
    .addColumn('is_main', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('contacts_customer').on('contacts').column('customer_id').execute();

  await withIdColumn(engine, db.schema.createTable('api_tokens'))
    .addColumn('contact_id', 'integer', (c) => c.notNull().references('contacts.id').onDelete('cascade'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('token_prefix', 'text', (c) => c.notNull())
    .addColumn('label', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .execute();
  await db.schema.createIndex('api_tokens_contact').on('api_tokens').column('contact_id').execute();

  await withIdColumn(engine, db.schema.createTable('plans'))
    .addColumn('reseller_id', 'integer', (c) => c.references('customers.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('max_databases', 'integer', (c) => c.notNull())
    .addColumn('max_email_addresses', 'integer', (c) => c.notNull())
    .addColumn('mailbox_quota_mb', 'integer', (c) => c.notNull())
    .addColumn('max_subdomains', 'integer', (c) => c.notNull())
    .addColumn('webspace_mb', 'integer', (c) => c.notNull())
    .addColumn('database_versions', 'text', (c) => c.notNull())
    .addColumn('php_versions', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await withIdColumn(engine, db.schema.createTable('packages'))
    .addColumn('customer_id', 'integer', (c) => c.notNull().references('customers.id'))
    .addColumn('plan_id', 'integer', (c) => c.notNull().references('plans.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('linux_user', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('packages_customer').on('packages').column('customer_id').execute();

  await db.schema
    .createTable('domains')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('name_unicode', 'text', (c) => c.notNull())
    .addColumn('customer_id', 'integer', (c) => c.notNull().references('customers.id'))
    .addColumn('package_id', 'integer', (c) => c.references('packages.id'))
    .addColumn('is_registered', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('registration_created_at', 'text')
    .addColumn('registration_expires_at', 'text')
    .addColumn('registration_status', 'text')
    .addColumn('has_presence', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('dns_update_lock', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('dns_migration_mode', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('domains_customer').on('domains').column('customer_id').execute();
  await db.schema.createIndex('domains_package').on('domains').column('package_id').execute();

  await withIdColumn(engine, db.schema.createTable('queue_jobs'))
    .addColumn('customer_id', 'integer', (c) => c.references('customers.id'))
    .addColumn('job_type', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('object_id', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('payload', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('run_after', 'text', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'text')
    .addColumn('from_menu', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('finished_at', 'text')
    .execute();
  await db.schema.createIndex('queue_jobs_status').on('queue_jobs').columns(['status', 'run_after']).execute();
  await db.schema.createIndex('queue_jobs_customer').on('queue_jobs').columns(['customer_id', 'status']).execute();
}
