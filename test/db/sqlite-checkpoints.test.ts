// SQLite's WAL checkpointed on a thread of its own (docs/decisions/0033-sqlite-checkpoint-thread.md):
// what is committed reaches the database file without the committing connection checkpointing,
// and closing the store stops the thread.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/db/index.js';
import { FALLBACK_AUTOCHECKPOINT_PAGES } from '../../src/db/sqlite-checkpoints.js';
import { waitFor } from '../helpers/wait.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

async function storeWith(checkpointThread: boolean) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostplane-checkpoints-'));
  dirs.push(dir);
  const file = path.join(dir, 'store.db');
  const store = await openStore(file, { checkpointThread });
  await sql`create table t (x blob)`.execute(store.db);
  /** Commits `pages` pages of about 4 KiB, 100 to a statement. */
  const write = async (pages: number) => {
    for (let i = 0; i < pages; i += 100) {
      await sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < 100) insert into t (x) select randomblob(4000) from n`.execute(store.db);
    }
  };
  return { store, file, write };
}

describe('SQLite checkpoints on a thread', () => {
  it('commits reach the database file although the committing connection checkpoints only far later; close stops the thread', async () => {
    const { store, file, write } = await storeWith(true);
    const { rows } = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(store.db);
    expect(rows[0].wal_autocheckpoint).toBe(FALLBACK_AUTOCHECKPOINT_PAGES);
    const before = fs.statSync(file).size;
    // 3000 pages: below the connection's own threshold, so only the thread copies them into the file.
    await write(3000);
    await waitFor('the pages in the database file', async () => fs.statSync(file).size >= before + 3000 * 4000, 20_000);
    await store.close();
  });

  it('a process that has nothing left to do but close the store waits for the thread to close its connection', async () => {
    const { store, file } = await storeWith(false);
    await store.close();
    const script = `import { openStore } from './src/db/index.ts';
      const s = await openStore(${JSON.stringify(file)}, { checkpointThread: true });
      await s.close();
      console.log('closed');`;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: path.resolve(import.meta.dirname, '../..'), encoding: 'utf8' });
    expect(out).toBe('closed\n');
  });

  it('without the thread (a short command) the connection checkpoints as SQLite does by default', async () => {
    const { store } = await storeWith(false);
    const { rows } = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(store.db);
    expect(rows[0].wal_autocheckpoint).toBe(1000);
    await store.close();
  });
});
