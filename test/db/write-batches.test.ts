// Batches of writes no answer waits for (src/db/write-batches.ts): a batch the store could not take
// right now (busy, restarting: src/db/unavailable.ts) is tried again, backing off, the batches after
// it waiting their turn; a batch refused for what it says, or still not taken when the retry time is
// up, goes to `fail`. The store here is a function that refuses as the drivers do (their errors'
// codes); test/http/store-unavailable.test.ts does it with real stores.
import { describe, expect, it } from 'vitest';
import { WriteBatches } from '../../src/db/write-batches.js';

const busy = () => Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
const terminated = () => Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
const broken = () => Object.assign(new Error('UNIQUE constraint failed'), { code: 'SQLITE_CONSTRAINT_UNIQUE' });

describe('WriteBatches when the store cannot take a batch', () => {
  it('a batch refused as unavailable is written on a later try, and the items added meanwhile after it, in order', async () => {
    const refusals = [busy(), terminated()];
    const written: number[][] = [];
    const failed: number[] = [];
    const batches = new WriteBatches<number>(
      async (batch) => {
        const refusal = refusals.shift();
        if (refusal) throw refusal;
        written.push([...batch]);
      },
      (batch) => failed.push(...batch),
    );
    batches.add(1);
    batches.add(2);
    await new Promise((r) => setTimeout(r, 80)); // the first batch is on its way, and refused
    batches.add(3);
    await batches.settled();
    expect(written.flat()).toEqual([1, 2, 3]);
    expect(written[0]).toEqual([1, 2]);
    expect(failed).toEqual([]);
  });

  it('a batch refused for what it is fails at once, without another try', async () => {
    let tries = 0;
    const failed: { items: number[]; err: unknown }[] = [];
    const batches = new WriteBatches<number>(
      async () => {
        tries++;
        throw broken();
      },
      (items, err) => failed.push({ items, err }),
    );
    batches.add(7);
    await batches.settled();
    expect(tries).toBe(1);
    expect(failed).toEqual([{ items: [7], err: expect.objectContaining({ code: 'SQLITE_CONSTRAINT_UNIQUE' }) }]);
  });

  it('a batch still refused when the retry time is up fails, with the last refusal', async () => {
    let tries = 0;
    const failed: unknown[] = [];
    const batches = new WriteBatches<number>(
      async () => {
        tries++;
        throw busy();
      },
      (_items, err) => failed.push(err),
      500,
    );
    const started = Date.now();
    batches.add(1);
    await batches.settled();
    // Tries after 100, 200 ms; the next wait (400 ms) would end past 500 ms.
    expect(tries).toBe(3);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(failed).toEqual([expect.objectContaining({ code: 'SQLITE_BUSY' })]);
  });
});
