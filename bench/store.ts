// A fresh, migrated store for one bench run: a temporary SQLite file, or a new PostgreSQL schema
// that is dropped afterwards; and the settings every bench runs the app with.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { currentSchema } from '../src/db/dialect.js';
import { openStore, type Store } from '../src/db/index.js';
import { migrate } from '../src/db/migrate.js';
import { loadConfig, type Config } from '../src/config.js';
import { LOG_LEVEL } from './report.js';

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
    // As `hostplane serve` opens it: the WAL checkpointed on a thread of its own.
    store = await openStore(databaseUrl, { checkpointThread: true });
    drop = async () => {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    };
  }
  await migrate(store);
  return { store, databaseUrl, drop };
}

/**
 * The production defaults, except: the limits out of the way (one client sends everything), no DNS
 * server, the bench's log level; `extra` adds a bench's own settings:
 * `benchConfig(databaseUrl, 'https://api.example.com', { WEB_SERVER: 'local' })`.
 */
export function benchConfig(databaseUrl: string, publicBaseUrl: string, extra: Record<string, string> = {}): Config {
  return loadConfig({
    DATABASE_URL: databaseUrl,
    PUBLIC_BASE_URL: publicBaseUrl,
    RATE_LIMIT_MAX: '1000000000',
    ERROR_BLOCK_MAX: '1000000000',
    LOG_LEVEL,
    DNS_LISTEN: 'off',
    ...extra,
  });
}

/** `databaseUrl` as another process (up.sh's CLI) reaches `store`: a PostgreSQL store's schema in its URL. */
export async function processUrlOf(store: Store, databaseUrl: string): Promise<{ url: string; schema: string | null }> {
  const schema = await currentSchema(store.db);
  if (!schema) return { url: databaseUrl, schema: null };
  const u = new URL(databaseUrl);
  u.searchParams.set('schema', schema);
  return { url: u.toString(), schema };
}
