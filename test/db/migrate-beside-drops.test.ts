// Migrating a new schema while another schema of the same PostgreSQL database is dropped (tests
// and `?schema=` deployments share one database): Kysely's table lookup reads every schema and can
// fail naming the one being dropped; migrate looks only in its own schema.
import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { freshStore } from '../helpers/app.js';

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
});
