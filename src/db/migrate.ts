// Runs the migrations in order on either engine; idempotent, safe to call at every start.
import { Migrator, type Migration, type MigrationProvider } from 'kysely';
import type { Store } from './index.js';
import * as m001 from './migrations/001-foundation.js';

const ALL = { '001-foundation': m001 };

/** Migrates `store` to the newest schema; returns the names applied now. */
export async function migrate(store: Store): Promise<string[]> {
  const provider: MigrationProvider = {
    async getMigrations() {
      const out: Record<string, Migration> = {};
      for (const [name, m] of Object.entries(ALL)) out[name] = { up: (db) => m.up(db, store.engine) };
      return out;
    },
  };
  const migrator = new Migrator({ db: store.db, provider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
