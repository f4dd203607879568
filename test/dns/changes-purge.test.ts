// The DNS change log does not grow forever (docs/decisions/0003): entries older than a day that
// every registered DNS server has applied are deleted; nothing is deleted while no server is
// registered, nor anything a lagging server still needs.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ZoneRepository } from '../../src/dns/zone.repository.js';
import { nowIso } from '../../src/db/time.js';
import { ENGINES, freshStore, type TestStore } from '../helpers/app.js';

const DAY = 24 * 60 * 60 * 1000;

describe.each(ENGINES)('dns_changes purge on %s', (engine) => {
  let ts: TestStore;
  let repo: ZoneRepository;
  const ids = async () => (await ts.store.db.selectFrom('dns_changes').select('id').orderBy('id').execute()).map((r) => r.id);
  beforeEach(async () => {
    ts = await freshStore(engine);
    repo = new ZoneRepository(ts.store.db);
    // Ids 1–4 are two days old, 5–6 recent.
    for (const age of [2 * DAY, 2 * DAY, 2 * DAY, 2 * DAY, 60_000, 1000]) {
      await ts.store.db.insertInto('dns_changes').values({ domain: 'a.example', created_at: nowIso(-age) }).execute();
    }
  });
  afterEach(() => ts.drop());

  const server = (id: string, applied: number) =>
    ts.store.db.insertInto('dns_servers').values({ id, applied_change_id: applied, heartbeat_at: nowIso(), started_at: nowIso() }).execute();

  it('keeps everything while no DNS server is registered', async () => {
    expect(await repo.purgeChanges(DAY)).toBe(0);
    expect(await ids()).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('deletes old entries up to what the slowest registered server has applied', async () => {
    await server('fast', 6);
    await server('slow', 3);
    expect(await repo.purgeChanges(DAY)).toBe(3);
    expect(await ids()).toEqual([4, 5, 6]);
  });

  it('never deletes recent entries, even when every server has applied them', async () => {
    await server('only', 6);
    expect(await repo.purgeChanges(DAY)).toBe(4);
    expect(await ids()).toEqual([5, 6]);
  });
});
