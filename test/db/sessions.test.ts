// A connection of its own (src/db/index.ts Store.session, PostgreSQL: the idempotency keys' lock
// connections): statements sent at once run one after the other on it, each answering its own
// rows, a failing one does not stop the next, session state (a session lock) stays with it, and
// the pg driver is never left to queue them (it warns that it will stop, and that warning would
// reach the operator's log).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, freshStore, type TestStore } from '../helpers/app.js';
import type { Session } from '../../src/db/index.js';

describe.runIf(ENGINES.includes('postgres'))('Store.session on postgres', () => {
  let ts: TestStore;
  let session: Session;
  beforeAll(async () => {
    ts = await freshStore('postgres');
    session = await ts.store.session!('test session', () => undefined, "set statement_timeout = '1s'");
  });
  afterAll(async () => {
    await session?.close();
    await ts?.drop();
  });

  const q = (text: string, values: unknown[] = []) => session.query({ name: '', text, values });

  it('statements sent at once answer in order, each its own rows; a failing one rejects alone; no warning', async () => {
    const warnings: string[] = [];
    const note = (w: Error) => warnings.push(w.message);
    process.on('warning', note);
    try {
      const sent = [
        q('select $1::int as n from pg_sleep(0.05)', [1]),
        q('select $1::int as n', [2]),
        q('select 1/0 as n'),
        q('select $1::int as n', [4]),
        q("select current_setting('statement_timeout') as t"),
      ];
      const settled = await Promise.allSettled(sent);
      expect(settled.map((s) => (s.status === 'fulfilled' ? s.value : String(s.reason)))).toEqual([
        [{ n: 1 }],
        [{ n: 2 }],
        expect.stringMatching(/division by zero/),
        [{ n: 4 }],
        [{ t: '1s' }],
      ]);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toEqual([]);
    } finally {
      process.off('warning', note);
    }
  });

  it("a session lock taken by one statement is this connection's: another connection cannot take it until it is released here", async () => {
    expect(await q('select pg_try_advisory_lock(4242) as locked')).toEqual([{ locked: true }]);
    const other = await ts.store.session!('other session', () => undefined);
    try {
      expect(await other.query({ name: '', text: 'select pg_try_advisory_lock(4242) as locked', values: [] })).toEqual([{ locked: false }]);
      expect(await q('select pg_advisory_unlock(4242) as released')).toEqual([{ released: true }]);
      expect(await other.query({ name: '', text: 'select pg_try_advisory_lock(4242) as locked', values: [] })).toEqual([{ locked: true }]);
    } finally {
      await other.close();
    }
  });
});
