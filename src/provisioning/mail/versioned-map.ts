// Maps a mail server polls from hostplane, served by version, and whether the server applies a
// version yet (docs/decisions/0019-maps-a-mail-server-has-applied.md). A change bumps its map in
// its own transaction (MapVersionsRepository.bump); the route answers 304 while the server's ETag
// names the current version and records what the server holds; a job or a PATCH then waits with
// mapProgress / waitForMap until rspamd's scanning workers apply that version or a later one.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Store } from '../../db/index.js';
import { isPostgres } from '../../db/dialect.js';
import type { Database } from '../../db/schema.js';
import { MapVersionsRepository, type MailMap, type MapVersion } from './map-versions.repository.js';

/**
 * From the first hold of a version until rspamd applies it. rspamd's controller fetches maps; its
 * scanning workers (the milter among them) take the copy from a shared cache on a timer of their
 * own, every 2 s plus up to 2 s while map_watch_interval is at most 2 s, and a second more for a
 * busy worker.
 */
export const MAP_SPREAD_MS = 5_000;
/** A server that asked nothing for this long has stopped fetching (rspamd waits 20 intervals after an error). */
export const MAP_SILENT_MS = 60_000;
/** How often a waiter looks again while the server holds no version of the change (rspamd asks every 2 to 4 s). */
export const MAP_LOOK_AGAIN_MS = 200;
/** A server's requests that change nothing it holds are written at most this often. */
const TOUCH_EVERY_MS = 5_000;

export type MapProgress =
  /** The server applies the version (or a later one). */
  | { state: 'applied' }
  /** The server never fetched this map: nothing there waits for it (e.g. a mail server without rspamd). */
  | { state: 'unwatched' }
  /** Not yet; look again in `retryMs`. */
  | { state: 'pending'; retryMs: number }
  /** The server stopped fetching before it held the version; `reason` says so for a job's error. */
  | { state: 'silent'; reason: string };

/**
 * Whether `server` applies `version` of `map`:
 * `const p = await mapProgress(store.db, 'mx1', 'settings', 17)`; `p.state === 'applied'`.
 */
export async function mapProgress(db: Kysely<Database>, server: string, map: MailMap, version: number, nowMs = Date.now()): Promise<MapProgress> {
  const { fetchedAt, firstHeldAt } = await new MapVersionsRepository(db).hold(server, map, version);
  if (fetchedAt === null) return { state: 'unwatched' };
  if (firstHeldAt !== null) {
    const left = Date.parse(firstHeldAt) + MAP_SPREAD_MS - nowMs;
    return left <= 0 ? { state: 'applied' } : { state: 'pending', retryMs: left };
  }
  if (nowMs - Date.parse(fetchedAt) > MAP_SILENT_MS) {
    return { state: 'silent', reason: `mail server ${server} has not fetched its ${map} map since ${fetchedAt}: version ${version} is not applied there yet` };
  }
  return { state: 'pending', retryMs: MAP_LOOK_AGAIN_MS };
}

/**
 * mapProgress until it is no longer pending or `timeoutMs` passed (then the last pending answer):
 * `if ((await waitForMap(store.db, 'mx1', 'settings', 17, { timeoutMs: 15_000 })).state === 'pending') …`.
 */
export async function waitForMap(
  db: Kysely<Database>,
  server: string,
  map: MailMap,
  version: number,
  o: { timeoutMs: number; signal?: AbortSignal },
): Promise<MapProgress> {
  const deadline = Date.now() + o.timeoutMs;
  for (;;) {
    const p = await mapProgress(db, server, map, version);
    const left = deadline - Date.now();
    if (p.state !== 'pending' || left <= 0 || o.signal?.aborted) return p;
    await new Promise((resolve) => setTimeout(resolve, Math.min(p.retryMs, left)));
  }
}

/** One server's map as its route serves it. */
export interface MapSource {
  server: string;
  map: MailMap;
  /** The body for the store as `db` sees it (the snapshot of its version). */
  render(db: Kysely<Database>): Promise<string>;
}

interface Served extends MapVersion {
  etag: string;
  body?: string;
}

const etagOf = (v: MapVersion) => `"${v.epoch}.${v.version}"`;

/** Whether If-None-Match names `etag` (weak comparison, RFC 9110 §13.1.2), or is `*`. */
function noneMatch(header: string, etag: string): boolean {
  return header.split(',').some((t) => {
    const tag = t.trim().replace(/^W\//, '');
    return tag === '*' || tag === etag;
  });
}

/**
 * Serves versioned maps: one per process, kept by the routes of the maps.
 * `app.get('/internal/x', (req, reply) => maps.serve(req, reply, { server: 'mx1', map: 'settings', render: (db) => … }))`.
 * Frequent polls cost one read of the version: a body is built once per (server, map, version).
 */
export class VersionedMaps {
  private readonly bodies = new Map<string, Served>();
  /** What this process last wrote of each server's holds: its time, the version. */
  private readonly written = new Map<string, { epoch: string; version: number; at: number }>();

  constructor(private readonly store: Store) {}

  async serve(request: FastifyRequest, reply: FastifyReply, source: MapSource): Promise<FastifyReply> {
    const { server, map } = source;
    const repo = new MapVersionsRepository(this.store.db);
    const current = (await repo.current(server, map)) ?? (await repo.ensure(server, map));
    const key = `${server}\n${map}`;
    // RFC 9110 §13.2.2: If-None-Match decides when present; If-Modified-Since only without it.
    // Last-Modified grows with every version, so a date at or after it names the current one.
    const inm = request.headers['if-none-match'];
    const ims = Date.parse(request.headers['if-modified-since'] ?? '');
    const etag = etagOf(current);
    if (inm !== undefined ? noneMatch(inm, etag) : Number.isFinite(ims) && ims >= current.modifiedS * 1000) {
      await this.record(request, server, map, current);
      return headers(reply, { ...current, etag }).code(304).send();
    }
    let served = this.bodies.get(key);
    if (!served || served.epoch !== current.epoch || served.version < current.version) {
      served = await this.snapshot(source);
      this.bodies.set(key, served);
    }
    const sent = served;
    // A 200 counts once rspamd has it whole: its controller parses it at once; the scanning
    // workers follow within MAP_SPREAD_MS. A HEAD gives it nothing.
    if (request.method === 'GET') reply.raw.once('finish', () => void this.record(request, server, map, sent));
    return headers(reply, sent).code(200).type('text/plain; charset=utf-8').send(sent.body);
  }

  /** The version and its body read in one snapshot, so the body is exactly that version's. */
  private async snapshot(source: MapSource): Promise<Served> {
    const read = async (trx: Kysely<Database>): Promise<Served> => {
      const repo = new MapVersionsRepository(trx);
      const v = (await repo.current(source.server, source.map)) ?? (await repo.ensure(source.server, source.map));
      return { ...v, etag: etagOf(v), body: await source.render(trx) };
    };
    const db = this.store.db;
    return isPostgres(db) ? db.transaction().setIsolationLevel('repeatable read').execute(read) : db.transaction().execute(read);
  }

  /** Writes that `server` holds `v` now: a new version at once, the same one at most every TOUCH_EVERY_MS. */
  private async record(request: FastifyRequest, server: string, map: MailMap, v: MapVersion): Promise<void> {
    const key = `${server}\n${map}`;
    const last = this.written.get(key);
    const now = Date.now();
    const same = last?.epoch === v.epoch && last.version >= v.version;
    if (same && now - last.at < TOUCH_EVERY_MS) return;
    this.written.set(key, { epoch: v.epoch, version: same ? last.version : v.version, at: now });
    const repo = new MapVersionsRepository(this.store.db);
    try {
      if (same) await repo.touch(server, map, v.epoch, new Date(now));
      else await repo.markApplied(server, map, v.epoch, v.version, new Date(now));
    } catch (err) {
      // The server has the map all the same; a job waits for the next request to record it.
      this.written.delete(key);
      request.log.warn({ err, server, map }, 'could not record the map version a mail server holds');
    }
  }
}

/**
 * `Expires` 5 s ahead is what sets rspamd's next request: without it, rspamd 3.12 asks at
 * most every 20 s once it sees ETag/Last-Modified, and 3.13+ every 10 minutes; with it, every
 * rspamd asks when it passes (4–5 s; sooner than 4 s it would wait 6: docs/decisions/0019).
 */
function headers(reply: FastifyReply, v: MapVersion & { etag: string }): FastifyReply {
  return reply
    .header('ETag', v.etag)
    .header('Last-Modified', new Date(v.modifiedS * 1000).toUTCString())
    .header('Expires', new Date(Date.now() + 5000).toUTCString())
    .header('Cache-Control', 'no-cache');
}
