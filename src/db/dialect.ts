// Every difference between SQLite and PostgreSQL lives in this file.
import { sql, type Kysely, type ColumnDefinitionBuilder, type CreateTableBuilder } from 'kysely';

export type Engine = 'sqlite' | 'postgres';

/** Adds an auto-increment integer primary key `id` in the engine's own way. */
export function withIdColumn<T extends string>(engine: Engine, t: CreateTableBuilder<T, never>) {
  return engine === 'postgres'
    ? t.addColumn('id', 'serial', (c: ColumnDefinitionBuilder) => c.primaryKey())
    : t.addColumn('id', 'integer', (c: ColumnDefinitionBuilder) => c.primaryKey().autoIncrement());
}

/** Makes the next generated id of `table` at least `next` (customer numbers start at 10001). */
export async function startIdsAt(engine: Engine, db: Kysely<any>, table: string, next: number) {
  if (engine === 'postgres') {
    await sql`select setval(pg_get_serial_sequence(${table}, 'id'), ${next - 1}, true)`.execute(db);
  } else {
    await sql`insert into sqlite_sequence (name, seq) values (${table}, ${next - 1})`.execute(db);
  }
}

/** True when `e` is a unique-constraint violation on either engine. */
export function isUniqueViolation(e: unknown): boolean {
  const err = e as { code?: string };
  return err?.code === '23505' || err?.code === 'SQLITE_CONSTRAINT_UNIQUE' || err?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
