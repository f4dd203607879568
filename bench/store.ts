// A fresh, migrated store for one bench run: a temporary SQLite file, or a new PostgreSQL schema
// that is dropped afterwards.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { openStore, type Store } from '../src/db/index.js';
import { migrate } from '../src/db/migrate.js';

export async function freshBenchStore(engine: 'sqlite' | 'postgres', pgUrl: string | undefined) {
  let store: Store;
  let databaseUrl: string;
  let drop: () => Promise<void>;
  if (engine === 'postgres') {
    databaseUrl = pgUrl!;
    const schema = `bench_${crypto.randomBytes(5).toString('hex')}`;
    store = await openStore(databaseUrl, { schema });
    drop = async () => {
      await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(store.db);
      await store.close();
    };
  } else {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostplane-bench-'));
    databaseUrl = path.join(dir, 'bench.db');
    store = await openStore(databaseUrl);
    drop = async () => {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    };
  }
  await migrate(store);
  return { store, databaseUrl, drop };
}
