// Runs the migrations in order on either engine; idempotent, safe to call at every start.
import { Migrator, sql, type DatabaseIntrospector, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import { currentSchema } from './dialect.js';
import type { Store } from './index.js';
import * as m001 from './migrations/001-foundation.js';
import * as m002 from './migrations/002-dns.js';
import * as m003dnsRecords from './migrations/003-dns-records.js';
import * as m004queueOrder from './migrations/004-queue-order.js';
import * as m005databases from './migrations/005-databases.js';
import * as m006queueSchedules from './migrations/006-queue-schedules.js';
import * as m007subdomains from './migrations/007-subdomains.js';
import * as m008email from './migrations/008-email.js';
import * as m009mailSieve from './migrations/009-mail-sieve.js';
import * as m010dnsSecondaries from './migrations/010-dns-secondaries.js';
import * as m011dnsChangeOwners from './migrations/011-dns-change-owners.js';
import * as m012planDmarcPolicy from './migrations/012-plan-dmarc-policy.js';
import * as m013mailMapVersions from './migrations/013-mail-map-versions.js';
import * as m014outboundLimits from './migrations/014-outbound-limits.js';
import * as m015dkimKeys from './migrations/015-dkim-keys.js';
import * as m016sshKeys from './migrations/016-ssh-keys.js';
import * as m017idempotencyKeys from './migrations/017-idempotency-keys.js';
import * as m018webhooks from './migrations/018-webhooks.js';
import * as m019tokenScopes from './migrations/019-token-scopes.js';
import * as m020auditEvents from './migrations/020-audit-events.js';
import * as m021panelSessions from './migrations/021-panel-sessions.js';
import * as m022dnssec from './migrations/022-dnssec.js';
import * as m023dnssecLifecycle from './migrations/023-dnssec-lifecycle.js';

const ALL = {
  '001-foundation': m001, '002-dns': m002, '003-dns-records': m003dnsRecords, '004-queue-order': m004queueOrder,
  '005-databases': m005databases, '006-queue-schedules': m006queueSchedules,
  '007-subdomains': m007subdomains, '008-email': m008email, '009-mail-sieve': m009mailSieve,
  '010-dns-secondaries': m010dnsSecondaries,
  '011-dns-change-owners': m011dnsChangeOwners,
  '012-plan-dmarc-policy': m012planDmarcPolicy,
  '013-mail-map-versions': m013mailMapVersions,
  '014-outbound-limits': m014outboundLimits,
  '015-dkim-keys': m015dkimKeys,
  '016-ssh-keys': m016sshKeys,
  '017-idempotency-keys': m017idempotencyKeys,
  '018-webhooks': m018webhooks,
  '019-token-scopes': m019tokenScopes,
  '020-audit-events': m020auditEvents,
  '021-panel-sessions': m021panelSessions,
  '022-dnssec': m022dnssec,
  '023-dnssec-lifecycle': m023dnssecLifecycle,
};

/** Every migration's name, in order. */
export const MIGRATION_NAMES = Object.keys(ALL);

/** Migrates `store` to the newest schema; returns the names applied now. */
export async function migrate(store: Store): Promise<string[]> {
  const provider: MigrationProvider = {
    async getMigrations() {
      const out: Record<string, Migration> = {};
      for (const [name, m] of Object.entries(ALL)) out[name] = { up: (db) => m.up(db, store.engine) };
      return out;
    },
  };
  // Kysely looks for its bookkeeping tables in every schema unless told which one: with several
  // schemas in one PostgreSQL database (tests, `?schema=` deployments) it would find another
  // schema's table, skip creating its own and fail. Name the schema the tables land in.
  const migrationTableSchema = (await currentSchema(store.db)) ?? undefined;
  const db = migrationTableSchema === undefined ? store.db : lookingOnlyIn(store.db, migrationTableSchema);
  const { error, results } = await new Migrator({ db, provider, migrationTableSchema }).migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * `db` whose introspection sees only `schema`. Kysely's own lookup reads every schema of the
 * database and fails (3F000) when another deployment or test drops one of them at that moment.
 */
function lookingOnlyIn(db: Kysely<any>, schema: string): Kysely<any> {
  const introspection: DatabaseIntrospector = {
    async getSchemas() {
      const { rows } = await sql<{ name: string }>`select nspname as name from pg_catalog.pg_namespace
        where nspname = ${schema}`.execute(db);
      return rows;
    },
    async getTables() {
      const { rows } = await sql<{ name: string; schema: string }>`select c.relname as name, n.nspname as schema
        from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
        where n.nspname = ${schema} and c.relkind in ('r', 'p', 'v')`.execute(db);
      return rows.map((r) => ({ ...r, isView: false, columns: [] }));
    },
    async getMetadata() {
      return { tables: await this.getTables() };
    },
  };
  return new Proxy(db, {
    get(target, prop) {
      if (prop === 'introspection') return introspection;
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
