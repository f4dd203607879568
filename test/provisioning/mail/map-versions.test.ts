// Versioned maps a mail server polls (docs/decisions/0019-maps-a-mail-server-has-applied.md), on
// both engines, through a route of their own built as a map route is: bump() in the change's
// transaction answers the new version; the route's ETag names it and Last-Modified grows by a second
// at least with each one; a 304 for the current ETag and a 200 once it is sent record that the
// server holds the version (a HEAD does not); the body is built once per version; mapProgress and
// waitForMap say when the server applies a version: never-asking servers hold nothing back, a
// held version counts after MAP_SPREAD_MS, a server that stopped asking is named.
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nowIso } from '../../../src/db/time.js';
import { MapVersionsRepository } from '../../../src/provisioning/mail/map-versions.repository.js';
import { MAP_LOOK_AGAIN_MS, MAP_SILENT_MS, MAP_SPREAD_MS, VersionedMaps, mapProgress, waitForMap } from '../../../src/provisioning/mail/versioned-map.js';
import { MailServersRepository } from '../../../src/provisioning/mail/servers.repository.js';
import { ENGINES, freshStore, type TestStore } from '../../helpers/app.js';
import { pollUntil } from '../../helpers/wait.js';

describe.each(ENGINES)('versioned maps on %s', (engine) => {
  let ts: TestStore;
  let app: FastifyInstance;
  let renders = 0;
  /** What the test map says: its content is a row of its own, changed with a bump. */
  let content = 'first\n';

  const repo = () => new MapVersionsRepository(ts.store.db);
  /** A change of the map: its content and its version in one transaction, as a service does it. */
  const change = (text: string) =>
    ts.store.db.transaction().execute(async (trx) => {
      content = text;
      return new MapVersionsRepository(trx).bump('mx1', 'dkim-keys');
    });
  /** The hold of version `v`, once recorded: a 200 records it after the answer is sent. */
  const held = (v: number) => pollUntil(() => repo().hold('mx1', 'dkim-keys', v), (h) => h.firstHeldAt !== null, `a hold of version ${v}`, 2000);
  const get = (headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET') => app.inject({ method, url: '/map', headers });

  beforeAll(async () => {
    ts = await freshStore(engine);
    for (const name of ['mx1', 'mx2']) {
      await new MailServersRepository(ts.store.db).add({
        name, doveadm_url: 'http://127.0.0.1:9', doveadm_key: `key-${name}`, smtp: '127.0.0.1:9', imap: '127.0.0.1:9', is_default: name === 'mx1' ? 1 : 0, created_at: nowIso(),
      });
    }
    app = Fastify();
    const maps = new VersionedMaps(ts.store);
    app.get('/map', (request, reply) =>
      maps.serve(request, reply, {
        server: 'mx1',
        map: 'dkim-keys',
        render: async () => {
          renders++;
          return content;
        },
      }),
    );
    await app.ready();
  });
  afterAll(async () => {
    await app?.close();
    await ts?.drop();
  });

  it('a server that never asked holds nothing and holds nothing back; bump() counts from 1 per server and map', async () => {
    expect(await repo().current('mx1', 'dkim-keys')).toBeUndefined();
    expect(await mapProgress(ts.store.db, 'mx1', 'dkim-keys', 1)).toEqual({ state: 'unwatched' });
    expect(await change('first\n')).toBe(1);
    expect(await change('first\n')).toBe(2);
    expect(await new MapVersionsRepository(ts.store.db).bump('mx1', 'settings')).toBe(1);
    expect(await new MapVersionsRepository(ts.store.db).bump('mx2', 'dkim-keys')).toBe(1);
    expect(await repo().appliedVersion('mx1', 'dkim-keys')).toBe(0);
    expect(await mapProgress(ts.store.db, 'mx1', 'dkim-keys', 2)).toEqual({ state: 'unwatched' });
  });

  it('200 with the body, an ETag naming the version and Last-Modified; once sent, the server holds that version', async () => {
    const r = await get();
    expect(r.statusCode).toBe(200);
    expect(r.body).toBe('first\n');
    expect(r.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(r.headers.etag).toMatch(/^"[A-Za-z0-9_-]{8}\.2"$/);
    expect(r.headers['cache-control']).toBe('no-cache');
    expect(new Date(String(r.headers['last-modified'])).toUTCString()).toBe(r.headers['last-modified']);
    const hold = await held(2);
    expect(await repo().appliedVersion('mx1', 'dkim-keys')).toBe(2);
    expect(hold.fetchedAt).not.toBeNull();
    expect(hold.firstHeldAt).toBe(hold.fetchedAt);
  });

  it('304 while the ETag names the current version, without building the body again; a new version gets 200 with the new body', async () => {
    const first = await get();
    const built = renders;
    for (let i = 0; i < 5; i++) {
      const again = await get({ 'if-none-match': String(first.headers.etag) });
      expect(again.statusCode).toBe(304);
      expect(again.body).toBe('');
      expect(again.headers.etag).toBe(first.headers.etag);
    }
    // Another ETag (or none) gets the body kept for this version.
    expect((await get({ 'if-none-match': '"other"' })).body).toBe('first\n');
    expect(renders).toBe(built);

    expect(await change('second\n')).toBe(3);
    const after = await get({ 'if-none-match': String(first.headers.etag) });
    expect(after.statusCode).toBe(200);
    expect(after.body).toBe('second\n');
    expect(after.headers.etag).toBe(String(first.headers.etag).replace(/\.2"$/, '.3"'));
    expect(renders).toBe(built + 1);
  });

  it('Last-Modified grows by a second at least with every version, also within one second (rspamd re-reads only then)', async () => {
    const dates: number[] = [];
    for (let i = 0; i < 3; i++) {
      await change(`burst ${i}\n`);
      dates.push(Date.parse(String((await get()).headers['last-modified'])));
    }
    expect(dates[1] - dates[0]).toBeGreaterThanOrEqual(1000);
    expect(dates[2] - dates[1]).toBeGreaterThanOrEqual(1000);
    // Without If-None-Match, If-Modified-Since at or after Last-Modified names the current version.
    const at = (ms: number) => new Date(ms).toUTCString();
    expect((await get({ 'if-modified-since': at(dates[2]) })).statusCode).toBe(304);
    expect((await get({ 'if-modified-since': at(dates[2] - 1000) })).statusCode).toBe(200);
    expect((await get({ 'if-modified-since': 'not a date' })).statusCode).toBe(200);
  });

  it('a HEAD sends no body, so it records nothing; a 304 records the version it names', async () => {
    const v = await change('for head\n');
    const head = await get({}, 'HEAD');
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
    expect(await repo().appliedVersion('mx1', 'dkim-keys')).toBe(v - 1);
    expect(await repo().hold('mx1', 'dkim-keys', v)).toMatchObject({ firstHeldAt: null });
    const notModified = await get({ 'if-none-match': String(head.headers.etag) });
    expect(notModified.statusCode).toBe(304);
    expect(await repo().appliedVersion('mx1', 'dkim-keys')).toBe(v);
  });

  it(`a held version applies ${MAP_SPREAD_MS} ms after its first hold (rspamd's workers follow its fetcher); a later one does not move that`, async () => {
    const v = await change('spread\n');
    expect(await mapProgress(ts.store.db, 'mx1', 'dkim-keys', v)).toEqual({ state: 'pending', retryMs: MAP_LOOK_AGAIN_MS });
    await get();
    const at = Date.parse((await held(v)).firstHeldAt!);
    expect(await mapProgress(ts.store.db, 'mx1', 'dkim-keys', v, at + 1000)).toEqual({ state: 'pending', retryMs: MAP_SPREAD_MS - 1000 });
    expect(await mapProgress(ts.store.db, 'mx1', 'dkim-keys', v, at + MAP_SPREAD_MS)).toEqual({ state: 'applied' });
    // The server fetches the next version: a waiter for v still counts from v's first hold.
    const next = await change('spread 2\n');
    await get();
    await held(next);
    expect(await mapProgress(ts.store.db, 'mx1', 'dkim-keys', v, at + MAP_SPREAD_MS)).toEqual({ state: 'applied' });
    expect(await mapProgress(ts.store.db, 'mx1', 'dkim-keys', v - 1, at + MAP_SPREAD_MS)).toEqual({ state: 'applied' });
    expect(await mapProgress(ts.store.db, 'mx1', 'dkim-keys', next, at + MAP_SPREAD_MS)).toMatchObject({ state: 'pending' });
  });

  it('a server that stopped asking before it held the version is named; one that asks again is waited for', async () => {
    const v = await change('silent\n');
    const { fetchedAt } = await repo().hold('mx1', 'dkim-keys', v);
    const p = await mapProgress(ts.store.db, 'mx1', 'dkim-keys', v, Date.parse(fetchedAt!) + MAP_SILENT_MS + 1);
    expect(p).toEqual({ state: 'silent', reason: `mail server mx1 has not fetched its dkim map since ${fetchedAt}: version ${v} is not applied there yet` });
    expect(await mapProgress(ts.store.db, 'mx1', 'dkim-keys', v, Date.parse(fetchedAt!) + MAP_SILENT_MS - 1)).toEqual({ state: 'pending', retryMs: MAP_LOOK_AGAIN_MS });
  });

  it('waitForMap: answers as soon as the version applies, or the last pending state when its time is up', async () => {
    const v = await change('wait\n');
    const started = Date.now();
    expect(await waitForMap(ts.store.db, 'mx1', 'dkim-keys', v, { timeoutMs: 300 })).toEqual({ state: 'pending', retryMs: MAP_LOOK_AGAIN_MS });
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(Date.now() - started).toBeLessThan(2000);
    await get();
    const waiting = waitForMap(ts.store.db, 'mx1', 'dkim-keys', v, { timeoutMs: MAP_SPREAD_MS + 5000 });
    expect(await waiting).toEqual({ state: 'applied' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(MAP_SPREAD_MS);
    // Unwatched servers answer at once.
    expect(await waitForMap(ts.store.db, 'mx2', 'dkim-keys', 1, { timeoutMs: 5000 })).toEqual({ state: 'unwatched' });
  }, 20_000);

  it('removing a server removes its versions and holds; added again, its versions have a new epoch (ETag)', async () => {
    const before = (await repo().current('mx2', 'dkim-keys'))!;
    const servers = new MailServersRepository(ts.store.db);
    await servers.remove('mx2');
    expect(await repo().current('mx2', 'dkim-keys')).toBeUndefined();
    await servers.add({ name: 'mx2', doveadm_url: 'http://127.0.0.1:9', doveadm_key: 'key-mx2', smtp: '127.0.0.1:9', imap: '127.0.0.1:9', is_default: 0, created_at: nowIso() });
    expect(await new MapVersionsRepository(ts.store.db).bump('mx2', 'dkim-keys')).toBe(1);
    const after = (await repo().current('mx2', 'dkim-keys'))!;
    expect(after.epoch).not.toBe(before.epoch);
    expect(after.version).toBe(before.version);
  });
});
