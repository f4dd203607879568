// All SQL of the maps mail servers poll from hostplane and of what each server holds of them
// (docs/decisions/0019-maps-a-mail-server-has-applied.md). A change that alters a map bumps its
// version in the change's own transaction; the map's route records the versions the server then
// fetched; jobs and PATCH wait for them (versioned-map.ts).
import crypto from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

/** The maps a mail server polls: rspamd's antispam settings, the DKIM signing table and key table. */
export type MailMap = 'settings' | 'dkim-signing' | 'dkim-keys';

/** A map's current version on one server, as its route serves it. */
export interface MapVersion {
  /** New with the row: an ETag of an earlier row (a server removed and added again) never matches. */
  epoch: string;
  version: number;
  /** The map's Last-Modified, Unix seconds. */
  modifiedS: number;
}

/** What a server holds of a map: its last request, and the first time it held `version` or a later one. */
export interface MapHold {
  fetchedAt: string | null;
  firstHeldAt: string | null;
}

/** How long hold rows are kept (the newest of a map always stays): far beyond any job's wait. */
const HOLDS_KEPT_MS = 60 * 60 * 1000;

const nowS = (ms: number) => Math.floor(ms / 1000);
const newEpoch = () => crypto.randomBytes(6).toString('base64url');

export class MapVersionsRepository {
  /** Pass the transaction of the change for bump(). */
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Bumps `map` of `server` in the caller's transaction and answers the new version, which the
   * server holds once its route served it: `const v = await new MapVersionsRepository(trx).bump('mx1', 'settings')`.
   * The row stays locked until commit (PostgreSQL), so versions commit in their order.
   */
  async bump(server: string, map: MailMap, nowMs = Date.now()): Promise<number> {
    const now = nowS(nowMs);
    // rspamd's workers re-read a map from its fetcher only when Last-Modified grows: one second at least.
    const later = sql<number>`case when mail_map_versions.modified_s + 1 > ${now} then mail_map_versions.modified_s + 1 else ${now} end`;
    const row = await this.db
      .insertInto('mail_map_versions')
      .values({ server, map, epoch: newEpoch(), version: 1, modified_s: now, fetched_at: null })
      .onConflict((oc) => oc.columns(['server', 'map']).doUpdateSet({ version: sql`mail_map_versions.version + 1`, modified_s: later }))
      .returning('version')
      .executeTakeFirstOrThrow();
    return Number(row.version);
  }

  /** The current version, or undefined before the first bump or request. */
  async current(server: string, map: MailMap): Promise<MapVersion | undefined> {
    const row = await this.db
      .selectFrom('mail_map_versions')
      .select(['epoch', 'version', 'modified_s'])
      .where('server', '=', server)
      .where('map', '=', map)
      .executeTakeFirst();
    return row && { epoch: row.epoch, version: Number(row.version), modifiedS: Number(row.modified_s) };
  }

  /** The current version, made (version 0, modified now) when there is none yet. */
  async ensure(server: string, map: MailMap, nowMs = Date.now()): Promise<MapVersion> {
    await this.db
      .insertInto('mail_map_versions')
      .values({ server, map, epoch: newEpoch(), version: 0, modified_s: nowS(nowMs), fetched_at: null })
      .onConflict((oc) => oc.columns(['server', 'map']).doNothing())
      .execute();
    return (await this.current(server, map))!;
  }

  /**
   * Records that `server` asked for `map` at `at` and holds `version` of `epoch` (nothing when the
   * row has another epoch now). The first hold of a version keeps its time; old holds go.
   */
  async markApplied(server: string, map: MailMap, epoch: string, version: number, at: Date): Promise<void> {
    const iso = at.toISOString();
    const touched = await this.db
      .updateTable('mail_map_versions')
      .set({ fetched_at: iso })
      .where('server', '=', server)
      .where('map', '=', map)
      .where('epoch', '=', epoch)
      .executeTakeFirst();
    if (Number(touched.numUpdatedRows) === 0) return;
    const added = await this.db
      .insertInto('mail_map_holds')
      .values({ server, map, version, held_at: iso })
      .onConflict((oc) => oc.columns(['server', 'map', 'version']).doNothing())
      .executeTakeFirst();
    if (Number(added.numInsertedOrUpdatedRows ?? 0) === 0) return;
    await this.db
      .deleteFrom('mail_map_holds')
      .where('server', '=', server)
      .where('map', '=', map)
      .where('version', '<', version)
      .where('held_at', '<', new Date(at.getTime() - HOLDS_KEPT_MS).toISOString())
      .execute();
  }

  /** Records a request of `server` for `map` that changed nothing it holds (a 304 seen before). */
  async touch(server: string, map: MailMap, epoch: string, at: Date): Promise<void> {
    await this.db
      .updateTable('mail_map_versions')
      .set({ fetched_at: at.toISOString() })
      .where('server', '=', server)
      .where('map', '=', map)
      .where('epoch', '=', epoch)
      .execute();
  }

  /** The newest version `server` holds of `map` (0: none). */
  async appliedVersion(server: string, map: MailMap): Promise<number> {
    const row = await this.db
      .selectFrom('mail_map_holds')
      .select((eb) => eb.fn.max('version').as('v'))
      .where('server', '=', server)
      .where('map', '=', map)
      .executeTakeFirst();
    return Number(row?.v ?? 0);
  }

  /** The server's last request for `map` and when it first held `version` or later: one statement. */
  async hold(server: string, map: MailMap, version: number): Promise<MapHold> {
    const row = await this.db
      .selectFrom('mail_map_versions as v')
      .select((eb) => [
        'v.fetched_at',
        eb
          .selectFrom('mail_map_holds as h')
          .select((h) => h.fn.min('h.held_at').as('first'))
          .whereRef('h.server', '=', 'v.server')
          .whereRef('h.map', '=', 'v.map')
          .where('h.version', '>=', version)
          .as('first_held_at'),
      ])
      .where('v.server', '=', server)
      .where('v.map', '=', map)
      .executeTakeFirst();
    return { fetchedAt: row?.fetched_at ?? null, firstHeldAt: (row?.first_held_at as string | null | undefined) ?? null };
  }
}
