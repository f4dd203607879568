// The Kysely factory: DATABASE_URL picks the engine (a file path or sqlite: URL, or postgres://).
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import type { Database } from './schema.js';
import type { Engine } from './dialect.js';

// count(*) and bigint columns come back as strings from pg; every number we store fits a double.
pg.types.setTypeParser(20, (v) => Number(v));

export interface Store {
  db: Kysely<Database>;
  engine: Engine;
  /** Human-readable location without credentials, for logs. */
  where: string;
  /**
   * PostgreSQL only: LISTEN on `channel` over a dedicated connection (a pooled one would be handed
   * to queries). `onLost` is called once if that connection breaks; the caller listens again.
   * `const stop = await store.listen?.('hostplane_jobs', (payload) => wake(), (err) => retryLater())`.
   */
  listen?(channel: string, onNotify: (payload: string) => void, onLost: (err: Error) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export interface StoreOptions {
  /** PostgreSQL only: use (and create) this schema; tests get a fresh one each. */
  schema?: string;
  poolSize?: number;
}

export function engineOf(url: string): Engine {
  return /^postgres(ql)?:\/\//i.test(url) ? 'postgres' : 'sqlite';
}

export function sqlitePath(url: string): string {
  let p = url.replace(/^sqlite:/i, '');
  if (p.startsWith('///')) p = p.slice(2);
  else if (p.startsWith('//')) p = p.slice(2);
  return p;
}

/** Opens the store named by `url`; e.g. `openStore('postgres://127.0.0.1/test')`. */
export async function openStore(url: string, opts: StoreOptions = {}): Promise<Store> {
  if (engineOf(url) === 'postgres') {
    // `?schema=<name>` in DATABASE_URL selects (and creates) a schema, so one PostgreSQL database
    // can hold several deployments (and the CLI tests a fresh schema each). pg never sees it.
    const parsed = new URL(url);
    const fromUrl = parsed.searchParams.get('schema');
    if (fromUrl !== null) {
      parsed.searchParams.delete('schema');
      url = parsed.toString();
    }
    opts = { ...opts, schema: opts.schema ?? (fromUrl || undefined) };
    if (opts.schema !== undefined && !/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(opts.schema)) {
      throw new Error(`DATABASE_URL: schema "${opts.schema}" must be letters, digits and _ (at most 63).`);
    }
    const pool = new pg.Pool({
      connectionString: url,
      max: opts.poolSize ?? 10,
      options: opts.schema ? `-c search_path=${opts.schema}` : undefined,
    });
    // An idle client that loses its server must not crash the process.
    pool.on('error', () => {});
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    if (opts.schema) await sql`create schema if not exists ${sql.id(opts.schema)}`.execute(db);
    const u = new URL(url);
    const where = `postgres://${u.host}${u.pathname}${opts.schema ? `?schema=${opts.schema}` : ''}`;
    const schemaOption = opts.schema ? `-c search_path=${opts.schema}` : undefined;
    const listen = async (channel: string, onNotify: (payload: string) => void, onLost: (err: Error) => void) => {
      const client = new pg.Client({ connectionString: url, options: schemaOption });
      let lost = false;
      const fail = (err: Error) => {
        if (lost) return;
        lost = true;
        onLost(err);
      };
      client.on('error', fail);
      client.on('end', () => fail(new Error('LISTEN connection closed')));
      client.on('notification', (m) => {
        if (m.channel === channel) onNotify(m.payload ?? '');
      });
      try {
        await client.connect();
        await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
      } catch (err) {
        lost = true;
        await client.end().catch(() => {});
        throw err;
      }
      return async () => {
        lost = true;
        await client.end().catch(() => {});
      };
    };
    return { db, engine: 'postgres', where, listen, close: () => db.destroy() };
  }
  const file = sqlitePath(url);
  if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const database = new SQLite(file);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  database.pragma('busy_timeout = 5000');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(database) }) });
  return { db, engine: 'sqlite', where: file, close: () => db.destroy() };
}

/**
 * Kysely's SQLite driver prepares every statement anew; preparing costs more than running our
 * small queries. The SQL text of a query shape is stable (values are parameters), so statements
 * are cached by text. The cache is bounded: past its size it starts over.
 */
function withStatementCache(database: SQLite.Database, max = 500) {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => database.close(),
    prepare(text: string) {
      let stmt = cache.get(text);
      if (!stmt) {
        if (cache.size >= max) cache.clear();
        stmt = database.prepare(text);
        cache.set(text, stmt);
      }
      return stmt;
    },
  };
}
