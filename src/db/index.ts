// The Kysely factory: DATABASE_URL picks the engine (a file path or sqlite: URL, or postgres://).
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, SqliteDialect, sql, type PostgresPool, type PostgresPoolClient } from 'kysely';
import type { Database } from './schema.js';
import { SchemaPostgresDialect, TAKE_SESSION_LOCK_SQL, type Engine } from './dialect.js';
import { registerDirectReader, statementName } from './precompiled.js';
import { sqliteReads, type StatementSource } from './sqlite-reads.js';
import { startCheckpointer } from './sqlite-checkpoints.js';
import { Signals } from './signals.js';
import { ConfigError } from '../config.js';

// count(*) and bigint columns come back as strings from pg; every number we store fits a double.
pg.types.setTypeParser(20, (v) => Number(v));

export interface Store {
  db: Kysely<Database>;
  engine: Engine;
  /** Human-readable location without credentials, for logs. */
  where: string;
  /** In-process signals between the parts of this process that use this Store (src/db/signals.ts). */
  signals: Signals;
  /**
   * PostgreSQL only: LISTEN on `channel` over a dedicated connection (a pooled one would be handed
   * to queries). `onLost` is called once if that connection breaks; the caller listens again.
   * `const stop = await store.listen?.('hostplane_jobs', (payload) => wake(), (err) => retryLater())`.
   */
  listen?(channel: string, onNotify: (payload: string) => void, onLost: (err: Error) => void): Promise<() => Promise<void>>;
  /**
   * PostgreSQL only: takes the session lock `name` on a dedicated connection and holds it until
   * `release()`, or until that connection or this process dies (the server then frees it).
   * `onLost` is called once if the connection breaks while held, or if `check()` fails.
   * `const lock = await store.holdLock?.('hostplane worker h:1:ab12cd', (err) => retryLater())`.
   */
  holdLock?(name: string, onLost: (err: Error) => void): Promise<HeldLock>;
  /**
   * PostgreSQL only: a connection of its own (not pooled), for statements that must share one
   * session (session locks taken by one statement and released by another). `onLost` is called
   * once if it breaks; `init` runs once on it first (settings).
   * `const s = await store.session?.('key locks', (err) => forget(s), "set statement_timeout = '1s'")`.
   */
  session?(what: string, onLost: (err: Error) => void, init?: string): Promise<Session>;
  close(): Promise<void>;
}

/** A connection of its own (Store.session): named statements, prepared once on it. */
export interface Session {
  query(q: { name: string; text: string; values: readonly unknown[] }): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

/** A session lock held on a connection of its own (Store.holdLock). */
export interface HeldLock {
  /**
   * One round trip on the lock's connection. A connection can die without a word (a NAT that
   * drops idle connections, a failover): the server has freed the lock, yet nothing tells this
   * process. A round trip that fails or gets no answer within LOCK_CHECK_TIMEOUT_MS closes the
   * connection, calls `onLost` and rejects.
   */
  check(): Promise<void>;
  release(): Promise<void>;
}

/** How long the `select 1` of HeldLock.check may take before the lock's connection counts as dead. */
const LOCK_CHECK_TIMEOUT_MS = 5_000;
/**
 * Any other statement on a dedicated connection, and connecting: a backstop for a connection that
 * went silent (longer than the 5-s lock_timeout of taking a lock, so the server's answer comes first).
 */
const DEDICATED_TIMEOUT_MS = 10_000;
/**
 * How long a statement waits for a pooled connection — a free one, or a new one from a server that
 * does not answer — before it fails (and its request answers 503, src/db/unavailable.ts).
 */
const POOL_WAIT_MS = 10_000;
/** How long closing a dedicated connection waits for the server's goodbye before cutting it. */
const CLOSE_GRACE_MS = 1_000;
/** TCP keepalive on dedicated and pooled connections: a connection that is idle for this long is probed (NATs drop idle ones). */
const KEEPALIVE_MS = 10_000;

export interface StoreOptions {
  /** PostgreSQL only: use (and create) this schema; tests get a fresh one each. */
  schema?: string;
  poolSize?: number;
  /** PostgreSQL: how long a statement waits for a pooled connection before it fails (10 s). */
  poolWaitMs?: number;
  /**
   * SQLite: create the file's missing directories. Only for the embedded default database
   * (`./data/hostplane.db` of a fresh checkout); any other file must be in an existing directory.
   */
  createDirectory?: boolean;
  /**
   * SQLite: checkpoint the WAL on a thread of its own (src/db/sqlite-checkpoints.ts), for the
   * long-running processes (serve, worker, dns); a short command keeps SQLite's own checkpoints.
   */
  checkpointThread?: boolean;
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
      connectionTimeoutMillis: opts.poolWaitMs ?? POOL_WAIT_MS,
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_MS,
    });
    // An idle client that loses its server must not crash the process.
    pool.on('error', () => {});
    const db = new Kysely<Database>({ dialect: new SchemaPostgresDialect({ pool: withNamedStatements(pool) }) });
    // Precompiled reads (src/db/precompiled.ts) go to the pool without Kysely, as named statements:
    // each pooled connection parses and plans one once.
    // pg types rows as arrays only for a literal rowMode 'array': two calls.
    registerDirectReader(db, (q, values) =>
      q.arrays
        ? pool.query({ name: q.name || undefined, text: q.sql, values: values as unknown[], rowMode: 'array' }).then((r) => r.rows)
        : pool.query({ name: q.name, text: q.sql, values: values as unknown[] }).then((r) => r.rows),
    );
    if (opts.schema) await sql`create schema if not exists ${sql.id(opts.schema)}`.execute(db);
    const u = new URL(url);
    const where = `postgres://${u.host}${u.pathname}${opts.schema ? `?schema=${opts.schema}` : ''}`;
    const schemaOption = opts.schema ? `-c search_path=${opts.schema}` : undefined;
    /** A connection of its own (not pooled), prepared by `setup`; `onLost` is called once if it breaks. */
    const dedicated = async (what: string, setup: (client: pg.Client) => Promise<unknown>, onLost: (err: Error) => void) => {
      const client = new pg.Client({
        connectionString: url,
        options: schemaOption,
        keepAlive: true,
        keepAliveInitialDelayMillis: KEEPALIVE_MS,
        connectionTimeoutMillis: DEDICATED_TIMEOUT_MS,
        query_timeout: DEDICATED_TIMEOUT_MS,
      });
      // Until `setup` is done a failure is its rejection, not a loss.
      let lost = true;
      const fail = (err: Error) => {
        if (lost) return;
        lost = true;
        onLost(err);
      };
      let closing: Promise<void> | undefined;
      // Once only: a second client.end() would wait for an 'end' that has already come. A goodbye
      // nobody answers (a connection gone silent) must not hold up the caller, e.g. a worker's
      // stop(): after a second the socket is cut (as end() does at once while a statement waits).
      const close = () => {
        lost = true;
        return (closing ??= (async () => {
          const cut = setTimeout(() => client.connection.stream.destroy(), CLOSE_GRACE_MS);
          await client.end().catch(() => {});
          clearTimeout(cut);
        })());
      };
      client.on('error', fail);
      client.on('end', () => fail(new Error(`${what} connection closed`)));
      try {
        await client.connect();
        await setup(client);
      } catch (err) {
        await close();
        throw err;
      }
      lost = false;
      return { client, fail, close };
    };
    const listen = async (channel: string, onNotify: (payload: string) => void, onLost: (err: Error) => void) => {
      const { close } = await dedicated(
        'LISTEN',
        (client) => {
          client.on('notification', (m) => {
            if (m.channel === channel) onNotify(m.payload ?? '');
          });
          return client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
        },
        onLost,
      );
      return close;
    };
    const holdLock = async (name: string, onLost: (err: Error) => void): Promise<HeldLock> => {
      const what = 'session lock';
      const { client, fail, close } = await dedicated(
        what,
        async (c) => {
          // A peer's probe holds the lock for a moment; a lock held longer is someone else's.
          await c.query(`set lock_timeout = '5s'`);
          await c.query(TAKE_SESSION_LOCK_SQL, [name]);
        },
        onLost,
      );
      return {
        release: close,
        check: async () => {
          let timer: NodeJS.Timeout | undefined;
          const silence = new Promise<never>((_, reject) => {
            const late = () => reject(new Error(`the ${what} connection gave no answer within ${LOCK_CHECK_TIMEOUT_MS} ms`));
            // setImmediate: after this turn's I/O, so an answer that came while the event loop was
            // blocked (a long GC pause) is read first and counts.
            timer = setTimeout(() => setImmediate(late), LOCK_CHECK_TIMEOUT_MS);
          });
          try {
            await Promise.race([client.query('select 1'), silence]);
          } catch (err) {
            fail(err as Error);
            await close();
            throw err;
          } finally {
            clearTimeout(timer);
          }
        },
      };
    };
    const session = async (what: string, onLost: (err: Error) => void, init?: string): Promise<Session> => {
      const { client, close } = await dedicated(what, (c) => (init ? c.query(init) : Promise.resolve()), onLost);
      // One statement after the other, queued here: pg queues a query sent while another runs too,
      // but warns that it will stop doing so (pg 9), and the warning would reach the operator's log.
      let last: Promise<unknown> = Promise.resolve();
      return {
        query: (q) => {
          const run = last.then(() => client.query({ name: q.name, text: q.text, values: [...q.values] }));
          last = run.catch(() => undefined);
          return run.then((r) => r.rows);
        },
        close,
      };
    };
    return { db, engine: 'postgres', where, signals: new Signals(), listen, holdLock, session, close: () => db.destroy() };
  }
  const file = sqlitePath(url);
  if (file !== ':memory:') {
    const dir = path.dirname(path.resolve(file));
    if (opts.createDirectory) fs.mkdirSync(dir, { recursive: true });
    else checkDirectory(dir);
  }
  const database = new SQLite(file);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  database.pragma('busy_timeout = 5000');
  // Precompiled reads run on this connection beside Kysely, their answers kept until the database
  // changes (src/db/sqlite-reads.ts).
  const { statements, reader } = sqliteReads(database, beginImmediate(withStatementCache(database)));
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: statements }) });
  registerDirectReader(db, reader);
  const checkpointer = opts.checkpointThread && file !== ':memory:' ? startCheckpointer(database) : null;
  const close = async () => {
    await checkpointer?.stop();
    await db.destroy();
  };
  return { db, engine: 'sqlite', where: file, signals: new Signals(), close };
}

/**
 * The directory of a SQLite file must exist: a typo in DATABASE_URL would otherwise make a new,
 * empty database somewhere (and its directories) instead of failing.
 */
function checkDirectory(dir: string): void {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    throw new ConfigError([`DATABASE_URL: the directory ${dir} does not exist; create it first (mkdir -p ${dir}) or name a file in an existing directory`]);
  }
  if (!stat.isDirectory()) throw new ConfigError([`DATABASE_URL: ${dir} is not a directory`]);
}

/**
 * What a statement's result columns must not be to get a name: `*` (`select *`, `t.*`,
 * `returning *`; `count(*)` is fine).
 */
const STAR_RESULT = /[\s,.]\*(?=[\s,]|$)/;

/**
 * Statements with parameters and named result columns run as named (prepared) statements, named by
 * their text: PostgreSQL parses and plans them once per connection instead of on every request
 * (decision 0012). Named columns, since `select *` under a migration would fail "cached plan must
 * not change result type"; at most `max` texts; never behind a transaction-mode pooler.
 */
function withNamedStatements(pool: pg.Pool, max = 200): PostgresPool {
  const names = new Map<string, string>();
  const nameOf = (text: string): string | undefined => {
    let name = names.get(text);
    if (name === undefined && names.size < max && !STAR_RESULT.test(text)) {
      name = statementName(text);
      names.set(text, name);
    }
    return name;
  };
  // One wrapper per pg client: Kysely keeps its connection object per client it is handed.
  const wrapped = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const wrap = (client: pg.PoolClient): PostgresPoolClient => {
    // A statement failed with its connection (the server ended it): the pool must not hand it out
    // again, which it would if the socket's end came after the release.
    let lost: Error | undefined;
    return {
      query: ((text: string, values?: unknown[]) => {
        // Kysely passes a cursor object instead of text when streaming (not used here): as it is.
        const name = typeof text === 'string' && values?.length ? nameOf(text) : undefined;
        const run = name ? client.query({ name, text, values }) : client.query(text, values);
        return run instanceof Promise ? run.catch((err: Error) => Promise.reject(connectionLost(err) ? (lost = err) : err)) : run;
      }) as unknown as PostgresPoolClient['query'],
      release: () => {
        client.release(lost);
        lost = undefined;
      },
    };
  };
  return {
    async connect() {
      const client = await pool.connect();
      let w = wrapped.get(client);
      if (!w) {
        wrapped.set(client, (w = wrap(client)));
        // A connection the server ends while it is handed out (a restart, pg_terminate_backend)
        // fails its statement, which answers the request 503; pg also emits the loss on the
        // client, which must not crash the process. The pool drops the client as it comes back (wrap).
        client.on('error', () => {});
      }
      return w;
    },
    end: () => pool.end(),
  };
}

/** A statement's error that ends its connection too: the server's FATAL or PANIC, or the driver's own (no severity: the socket broke). */
const connectionLost = (err: unknown) => {
  const severity = (err as { severity?: string }).severity;
  return severity === undefined || severity === 'FATAL' || severity === 'PANIC';
};

/**
 * Transactions take SQLite's write lock as they begin (`begin immediate` for Kysely's `begin`).
 * With a plain `begin` a transaction that reads and then writes holds only a snapshot until its
 * first write; when another process on the same file (`hostplane worker`, `hostplane dns`)
 * commits in between, that write fails at once with SQLITE_BUSY_SNAPSHOT, which no busy timeout
 * waits out (a 500 for the request). Taken at `begin`, the lock is waited for (busy_timeout).
 * Within one process Kysely runs one transaction at a time anyway.
 */
function beginImmediate(source: StatementSource): StatementSource {
  return { close: () => source.close(), prepare: (text) => source.prepare(text === 'begin' ? 'begin immediate' : text) };
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
