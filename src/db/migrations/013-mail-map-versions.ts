// Maps a mail server polls from hostplane, and what it holds of them
// (docs/decisions/0019-maps-a-mail-server-has-applied.md):
// - `mail_map_versions`: one row per (server, map) — `settings` (rspamd's antispam settings), `dkim`
//   next. `version` grows in the transaction of every change that alters the map; `epoch` is new
//   when the row is, so an ETag never names another body after a server was removed and added
//   again; `modified_s` (Unix seconds) is the map's Last-Modified, one second past the last at least,
//   since rspamd's workers take a map from its fetcher only when that date grows; `fetched_at` is
//   the server's last request, null while it never asked.
// - `mail_map_holds`: when the server first held each version (a 304 for it, or its 200 sent);
//   a job waits for the first hold of its version or a later one.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('mail_map_versions')
    .addColumn('server', 'text', (c) => c.notNull().references('mail_servers.name').onDelete('cascade'))
    .addColumn('map', 'text', (c) => c.notNull())
    .addColumn('epoch', 'text', (c) => c.notNull())
    .addColumn('version', 'bigint', (c) => c.notNull())
    .addColumn('modified_s', 'bigint', (c) => c.notNull())
    .addColumn('fetched_at', 'text')
    .addPrimaryKeyConstraint('mail_map_versions_pk', ['server', 'map'])
    .execute();
  await db.schema
    .createTable('mail_map_holds')
    .addColumn('server', 'text', (c) => c.notNull().references('mail_servers.name').onDelete('cascade'))
    .addColumn('map', 'text', (c) => c.notNull())
    .addColumn('version', 'bigint', (c) => c.notNull())
    .addColumn('held_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('mail_map_holds_pk', ['server', 'map', 'version'])
    .execute();
}
