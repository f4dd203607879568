// The precompiled reads of an SQLite store (precompiled.ts), their answers kept until the database
// changes: another connection's commit moves `PRAGMA data_version`, this connection's writes move a
// count of its writing statements; an answer is served again only while both stand still, so a
// revoke is seen by the next request (decision 0012).
import type SQLite from 'better-sqlite3';
import type { DirectReader } from './precompiled.js';

/** The statement cache Kysely's SQLite dialect gets (src/db/index.ts withStatementCache). */
export interface StatementSource {
  close(): void;
  prepare(text: string): SQLite.Statement;
}

/** Answers kept, at most; past that the cache starts over. */
const MAX_ANSWERS = 1000;
/** Statements of bulk reads kept prepared, at most. */
const MAX_BULK_STATEMENTS = 50;

/**
 * Wraps the statements Kysely uses (counting those that may write) and builds the reader of
 * precompiled reads: `const { statements, reader } = sqliteReads(database, withStatementCache(database))`,
 * then `new SqliteDialect({ database: statements })` and `registerDirectReader(db, reader)`.
 */
export function sqliteReads(database: SQLite.Database, source: StatementSource): { statements: StatementSource; reader: DirectReader } {
  let writes = 0;
  const statements: StatementSource = {
    close: () => source.close(),
    prepare(text: string) {
      const stmt = source.prepare(text);
      // `readonly` is SQLite's own verdict (sqlite3_stmt_readonly): INSERT … RETURNING may write,
      // BEGIN and COMMIT do not (the writes between them counted already); BEGIN IMMEDIATE does
      // (it takes the write lock): one more count per transaction, harmless.
      if (!stmt.readonly) writes++;
      return stmt;
    },
  };
  const dataVersion = database.prepare('pragma data_version').pluck();
  const answers = new Map<string, { version: string; rows: readonly unknown[] }>();
  // Bulk reads (readArrays) get statements of their own: raw mode is a statement's setting.
  const bulk = new Map<string, SQLite.Statement>();
  const reader: DirectReader = (q, values) => {
    // A transaction is open on the connection: Kysely's mutex orders the read after it, and it
    // must not see the transaction's uncommitted writes.
    if (database.inTransaction) return null;
    if (q.arrays) {
      let stmt = bulk.get(q.sql);
      if (!stmt) {
        if (bulk.size >= MAX_BULK_STATEMENTS) bulk.clear();
        stmt = database.prepare(q.sql);
        if (!stmt.readonly) throw new Error('readArrays runs reads only');
        bulk.set(q.sql, stmt.raw(true));
      }
      return stmt.all(values as unknown[]) as unknown[];
    }
    if (q.once) return statements.prepare(q.sql).all(values as unknown[]);
    const version = `${dataVersion.get() as number} ${writes}`;
    const key = `${q.name} ${JSON.stringify(values)}`;
    const kept = answers.get(key);
    if (kept && kept.version === version) return kept.rows as unknown[];
    // Frozen: every later request gets these same objects.
    const rows = Object.freeze((statements.prepare(q.sql).all(values as unknown[]) as object[]).map((r) => Object.freeze(r)));
    if (answers.size >= MAX_ANSWERS) answers.clear();
    answers.set(key, { version, rows });
    return rows as unknown[];
  };
  return { statements, reader };
}
