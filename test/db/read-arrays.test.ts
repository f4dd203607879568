// Bulk reads as arrays (src/db/precompiled.ts readArrays: a DNS server reads every
// record of the store at start): rows as arrays of the selected columns in order, on both engines,
// and never a write that is not committed (SQLite runs the read on the connection a transaction
// may hold open).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, freshStore, type TestStore } from '../helpers/app.js';
import { precompiled, readArrays } from '../../src/db/precompiled.js';
import { nowIso } from '../../src/db/time.js';

describe.each(ENGINES)('readArrays on %s', (engine) => {
  let ts: TestStore;
  beforeAll(async () => {
    ts = await freshStore(engine);
    const at = nowIso();
    await ts.store.db.insertInto('dns_changes').values([{ domain: 'b.example', created_at: at, serial: 7, owners: null }, { domain: 'a.example', created_at: at, serial: null, owners: '["www"]' }]).execute();
  });
  afterAll(() => ts?.drop());

  const changes = () => ts.store.db.selectFrom('dns_changes').select(['domain', 'serial', 'owners', 'id']).orderBy('domain');

  it('answers each row as an array of its columns in select order, numbers as numbers and nulls as null', async () => {
    const rows = await readArrays(ts.store.db, changes());
    expect(rows).toEqual([
      ['a.example', null, '["www"]', expect.any(Number)],
      ['b.example', 7, null, expect.any(Number)],
    ]);
    // The same read twice: nothing kept from the first (a bulk read is never cached).
    await ts.store.db.updateTable('dns_changes').set({ serial: 8 }).where('domain', '=', 'b.example').execute();
    expect((await readArrays(ts.store.db, changes()))[1][1]).toBe(8);
  });

  it('a precompiled read answers the same arrays, its value swapped in (compiled once, named on PostgreSQL)', async () => {
    const byDomain = precompiled(ts.store.db, (domain: string) => changes().where('domain', '=', domain));
    expect(await byDomain.arrays('a.example')).toEqual([['a.example', null, '["www"]', expect.any(Number)]]);
    expect(await byDomain.arrays('b.example')).toEqual(await readArrays(ts.store.db, changes().where('domain', '=', 'b.example')));
    expect(await byDomain.arrays('none.example')).toEqual([]);
  });

  it('never answers a write its transaction has not committed', async () => {
    let inside!: () => void;
    const open = new Promise<void>((r) => (inside = r));
    let commit!: () => void;
    const committed = new Promise<void>((r) => (commit = r));
    const trx = ts.store.db.transaction().execute(async (t) => {
      await t.insertInto('dns_changes').values({ domain: 'c.example', created_at: nowIso(), serial: 1, owners: null }).execute();
      inside();
      await committed;
    });
    await open;
    const read = readArrays(ts.store.db, changes());
    // SQLite: the read waits for the transaction on its one connection; PostgreSQL: another
    // connection reads what is committed, while the transaction is still open.
    const early = await Promise.race([read, new Promise<undefined>((r) => setTimeout(r, engine === 'sqlite' ? 50 : 10_000))]);
    if (engine === 'sqlite') expect(early).toBeUndefined();
    else expect(early?.map((r) => r[0])).toEqual(['a.example', 'b.example']);
    commit();
    await trx;
    const after = await read;
    expect(after.map((r) => r[0])).toEqual(engine === 'sqlite' ? ['a.example', 'b.example', 'c.example'] : ['a.example', 'b.example']);
  });
});
