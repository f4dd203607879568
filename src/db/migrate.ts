// Runs the migrations in order on either engine; idempotent, safe to call at every start.
import { Migrator, type Migration, type MigrationProvider } from 'kysely';
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

const ALL = {
  '001-foundation': m001, '002-dns': m002, '003-dns-records': m003dnsRecords, '004-queue-order': m004queueOrder,
  '005-databases': m005databases, '006-queue-schedules': m006queueSchedules,
  '007-subdomains': m007subdomains, '008-email': m008email, '009-mail-sieve': m009mailSieve,
  '010-dns-secondaries': m010dnsSecondaries,
  '011-dns-change-owners': m011dnsChangeOwners,
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
  const migrator = new Migrator({ db: store.db, provider, migrationTableSchema });
  for (let attempt = 1; ; attempt++) {
    // Its own tables are looked up before it catches errors: those are thrown, the rest returned.
    const { error, results } = await migrator.migrateToLatest().catch((e: unknown) => ({ error: e, results: undefined }));
    if (!error) return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
    if (!droppedMeanwhile(error, migrationTableSchema) || attempt >= 10) throw error;
    await new Promise((resolve) => setTimeout(resolve, 20 * attempt * Math.random()));
  }
}

/**
 * Kysely's table lookup reads every schema of the database (pg_get_serial_sequence by name): a
 * schema another deployment or test drops at that moment fails it with 3F000 naming that schema.
 * Nothing was migrated then; the lookup is simply tried again.
 */
function droppedMeanwhile(error: unknown, ours: string | undefined): boolean {
  const e = error as { code?: string; message?: string };
  return e.code === '3F000' && (ours === undefined || !String(e.message).includes(`"${ours}"`));
}
