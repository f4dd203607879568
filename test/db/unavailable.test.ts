// Which failures of the store a request answers 503 for (src/db/unavailable.ts; API guide "Errors"),
// as the real drivers raise them: a PostgreSQL server that accepts connections and never answers,
// or a pool whose connections are all taken, fails a statement after the pool's wait; a closed port
// at once; SQLite's write lock held elsewhere after busy_timeout. A statement the store refuses for
// what it says (bad SQL, a broken constraint) stays an unexpected fault.
import net from 'node:net';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import SQLite from 'better-sqlite3';
import { openStore } from '../../src/db/index.js';
import { storeUnavailable } from '../../src/db/unavailable.js';
import { ENGINES, freshStore } from '../helpers/app.js';

/** What `run` fails with. */
async function failure(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (err) {
    return err;
  }
  throw new Error('it did not fail');
}

describe.runIf(ENGINES.includes('postgres'))('a PostgreSQL store that cannot answer', () => {
  const accepted = new Set<net.Socket>();
  const silent = net.createServer((socket) => accepted.add(socket)); // accepts, never says a word
  afterAll(async () => {
    for (const socket of accepted) socket.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });

  it('a server that never answers: the statement fails after the pool wait, as unavailable', async () => {
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as net.AddressInfo).port;
    const store = await openStore(`postgres://nobody@127.0.0.1:${port}/none`, { poolWaitMs: 300 });
    try {
      const started = Date.now();
      const err = await failure(() => sql`select 1`.execute(store.db));
      expect(Date.now() - started).toBeLessThan(5_000);
      expect((err as Error).message).toMatch(/timeout/i);
      expect(storeUnavailable(err)).toBe(true);
    } finally {
      await store.close();
    }
  });

  it('a closed port: unavailable at once', async () => {
    const free = net.createServer();
    await new Promise<void>((resolve) => free.listen(0, '127.0.0.1', resolve));
    const port = (free.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => free.close(() => resolve()));
    const store = await openStore(`postgres://nobody@127.0.0.1:${port}/none`);
    try {
      const err = await failure(() => sql`select 1`.execute(store.db));
      expect((err as { code?: string }).code).toBe('ECONNREFUSED');
      expect(storeUnavailable(err)).toBe(true);
    } finally {
      await store.close();
    }
  });

  it('every pooled connection taken for longer than the pool wait: unavailable; bad SQL and a broken constraint are not', async () => {
    const ts = await freshStore('postgres', { poolSize: 1 });
    const store = await openStore(process.env.TEST_DATABASE_URL!, { schema: ts.schema, poolSize: 1, poolWaitMs: 300 });
    try {
      let letGo!: () => void;
      const held = store.db.transaction().execute(async (trx) => {
        await sql`select 1`.execute(trx);
        await new Promise<void>((resolve) => (letGo = resolve));
      });
      await new Promise((r) => setTimeout(r, 50));
      const waited = await failure(() => sql`select 1`.execute(store.db));
      expect(storeUnavailable(waited)).toBe(true);
      letGo();
      await held;

      expect(storeUnavailable(await failure(() => sql`selec 1`.execute(store.db)))).toBe(false);
      const dup = await failure(() => sql`insert into plans (id, name) values (1, 'a'), (1, 'b')`.execute(store.db));
      expect((dup as { code?: string }).code).toMatch(/^23/);
      expect(storeUnavailable(dup)).toBe(false);
    } finally {
      await store.close();
      await ts.drop();
    }
  });
});

describe('a SQLite store that cannot answer', () => {
  it("a write while another connection holds the write lock: SQLITE_BUSY after busy_timeout, unavailable; a broken constraint is not", { timeout: 20_000 }, async () => {
    const ts = await freshStore('sqlite');
    const other = new SQLite(ts.url);
    try {
      other.exec('begin immediate');
      const busy = await failure(() => ts.store.db.transaction().execute((trx) => sql`delete from plans where id = -1`.execute(trx)));
      expect((busy as { code?: string }).code).toMatch(/^SQLITE_BUSY/);
      expect(storeUnavailable(busy)).toBe(true);
      other.exec('rollback');
      const missing = await failure(() => sql`insert into plans (id) values (null)`.execute(ts.store.db));
      expect((missing as { code?: string }).code).toMatch(/^SQLITE_CONSTRAINT/);
      expect(storeUnavailable(missing)).toBe(false);
    } finally {
      other.close();
      await ts.drop();
    }
  });
});
