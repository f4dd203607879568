// Migrating a new schema while another schema of the same PostgreSQL database is dropped (tests
// and `?schema=` deployments share one database): Kysely's table lookup reads every schema and can
// fail naming the one being dropped; migrate looks only in its own schema. And the migration lock
// is the schema's own: Kysely's one lock for the whole database made every schema wait for every
// other's migration.
import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import pg from 'pg';
import { freshStore } from '../helpers/app.js';
import { migrate } from '../../src/db/migrate.js';
import { MIGRATION_LOCK_KEY } from '../../src/db/dialect.js';
import { sleep } from '../helpers/wait.js';

describe.skipIf(!process.env.TEST_DATABASE_URL)('migrate on PostgreSQL', () => {
  it('succeeds while other schemas are created and dropped all the time', async () => {
    const churn = await freshStore('postgres', { migrated: false });
    let stop = false;
    const dropping = (async () => {
      for (let i = 0; !stop; i++) {
        const s = `churn_${process.pid}_${i}`;
        await sql`create schema ${sql.id(s)}`.execute(churn.store.db);
        await sql`create table ${sql.id(s)}.t (id serial primary key)`.execute(churn.store.db);
        await sql`drop schema ${sql.id(s)} cascade`.execute(churn.store.db);
      }
    })();
    const failures: string[] = [];
    try {
      for (let n = 0; n < 15; n++) {
        try {
          const ts = await freshStore('postgres');
          await ts.drop();
        } catch (e) {
          failures.push(String(e));
        }
      }
    } finally {
      stop = true;
      await dropping;
      await churn.drop();
    }
    expect(failures).toEqual([]);
  }, 120_000);

  it('a migration waits only for another migration of its own schema, never for other schemas\' (nor Kysely\'s lock for the whole database)', async () => {
    const a = await freshStore('postgres', { migrated: false });
    const b = await freshStore('postgres', { migrated: false });
    // Another process migrating schema a: it holds a's migration lock (and Kysely's own).
    const other = new pg.Client({ connectionString: a.url, options: `-c search_path=${a.schema}` });
    await other.connect();
    try {
      await other.query(`select pg_advisory_lock(${MIGRATION_LOCK_KEY}), pg_advisory_lock(3853314791062309107)`);
      const within = (p: Promise<unknown>, ms: number) => Promise.race([p.then(() => 'done'), sleep(ms).then(() => 'waiting')]);
      expect(await within(migrate(b.store), 30_000)).toBe('done');
      const ofA = migrate(a.store);
      expect(await within(ofA, 1_000)).toBe('waiting');
      await other.query(`select pg_advisory_unlock_all()`);
      expect(await within(ofA, 30_000)).toBe('done');
      expect((await ofA).length).toBeGreaterThan(20);
    } finally {
      await other.end();
      await a.drop();
      await b.drop();
    }
  }, 120_000);
});
