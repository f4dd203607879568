// SQLite transactions take the write lock as they begin (src/db/index.ts beginImmediate): a
// transaction that reads and then writes is not undone by another process committing in between
// (SQLITE_BUSY_SNAPSHOT, which no busy timeout waits out; it was a 500 for the request).
import Database from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { freshStore, type TestStore } from '../helpers/app.js';

describe('SQLite transactions beside another process on the same file', () => {
  let ts: TestStore | undefined;
  afterEach(async () => {
    await ts?.drop();
    ts = undefined;
  });

  it('a transaction that reads, then writes, commits; the other writer waits for it (here: gives up after its short timeout)', async () => {
    ts = await freshStore('sqlite');
    await sql`create table probe (who text not null)`.execute(ts.store.db);
    // Another process's connection, as `hostplane dns` or `hostplane worker` would hold.
    const other = new Database(ts.url);
    other.pragma('busy_timeout = 50');
    let otherError: { code?: string } | null = null;
    try {
      await ts.store.db.transaction().execute(async (trx) => {
        await sql`select count(*) from probe`.execute(trx);
        try {
          other.prepare(`insert into probe (who) values ('other')`).run();
        } catch (err) {
          otherError = err as { code?: string };
        }
        await sql`insert into probe (who) values ('api')`.execute(trx);
      });
      expect(otherError).toMatchObject({ code: 'SQLITE_BUSY' });
      // Once the transaction is over, the other connection writes as usual.
      other.prepare(`insert into probe (who) values ('other')`).run();
      expect(other.prepare('select who from probe order by rowid').pluck().all()).toEqual(['api', 'other']);
    } finally {
      other.close();
    }
  });
});
