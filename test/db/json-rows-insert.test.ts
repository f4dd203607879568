// Batch inserts (src/db/dialect.ts jsonRowsInsert; the audit trail's and the idempotency keys'
// batches): the same rows whatever the batch size — on SQLite up to BOUND_ROWS rows go as bound values,
// more as one JSON parameter, as always on PostgreSQL — with ON CONFLICT and RETURNING alike.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOUND_ROWS, jsonRowsInsert, type JsonRowsColumn } from '../../src/db/dialect.js';
import { ENGINES, freshStore, type TestStore } from '../helpers/app.js';

const COLUMNS = [['k', 'text'], ['n', 'integer'], ['note', 'text']] as const satisfies readonly JsonRowsColumn[];

describe.each(ENGINES)('jsonRowsInsert on %s', (engine) => {
  let ts: TestStore;
  beforeAll(async () => {
    ts = await freshStore(engine, { migrated: false });
    await sql`create table batch_rows (k text primary key, n integer, note text)`.execute(ts.store.db);
  });
  afterAll(() => ts?.drop());

  const rows = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => [`${prefix}${i}`, i, i % 2 ? null : `it's "${i}" — ü`]);
  const stored = async (prefix: string) =>
    (await sql<{ k: string; n: number; note: string | null }>`select k, n, note from batch_rows where k like ${`${prefix}%`} order by n`.execute(ts.store.db)).rows.map((r) => [r.k, r.n, r.note]);

  it.each([1, BOUND_ROWS, BOUND_ROWS + 1, 200])('%i rows: stored as given, numbers as numbers, nulls and quotes intact', async (count) => {
    const insert = jsonRowsInsert(ts.store.db, 'batch_rows', COLUMNS);
    await ts.store.db.executeQuery(insert(rows(`a${count}-`, count)));
    expect(await stored(`a${count}-`)).toEqual(rows(`a${count}-`, count));
  });

  it.each([2, 40])('%i rows with ON CONFLICT … WHERE and RETURNING: only the rows the conflict lets through come back', async (count) => {
    const upsert = jsonRowsInsert(ts.store.db, 'batch_rows', COLUMNS, {
      onConflict: sql`(k) do update set note = excluded.note where batch_rows.n = 0`,
      returning: ['k'],
    });
    const prefix = `c${count}-`;
    await ts.store.db.executeQuery(upsert(rows(prefix, count)));
    const again = rows(prefix, count).map(([k, n]) => [k, n, 'again']);
    const { rows: back } = await ts.store.db.executeQuery(upsert(again));
    // Row 0 is updated (its n is 0); every other key conflicts and is left as it was.
    expect(back).toEqual([{ k: `${prefix}0` }]);
    expect((await stored(prefix))[0]).toEqual([`${prefix}0`, 0, 'again']);
    expect((await stored(prefix)).slice(1)).toEqual(rows(prefix, count).slice(1));
  });
});
