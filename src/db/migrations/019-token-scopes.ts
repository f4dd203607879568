// Scoped API tokens (API guide "Scoped tokens"; docs/decisions/0028-token-scopes.md).
// - `api_tokens.read_only`: 1 lets the token read only.
// - `api_tokens.scope_domains`: the ACE names of the domains the token is limited to, comma
//   separated (no name has a comma); null: every domain its contact sees.
// - `api_tokens.acme_challenge`: 1 limits the token to `_acme-challenge` TXT records.
// - `api_tokens.expires_at`: when the token stops working (ISO, UTC); null: never.
// - `api_tokens.allow_ips`: the client networks it works from, canonical CIDRs comma separated; null: any.
// - `api_tokens.last_used_at`: when it last authenticated a request, to the minute.
// - `queue_jobs.token_id`: the token whose request enqueued the job (a limited token sees only those).
import type { Kysely } from 'kysely';
import type { Engine } from '../dialect.js';

export async function up(db: Kysely<any>, _engine: Engine): Promise<void> {
  // One column per statement: SQLite adds a single column per ALTER TABLE.
  const tokens = () => db.schema.alterTable('api_tokens');
  await tokens().addColumn('read_only', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await tokens().addColumn('scope_domains', 'text').execute();
  await tokens().addColumn('acme_challenge', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await tokens().addColumn('expires_at', 'text').execute();
  await tokens().addColumn('allow_ips', 'text').execute();
  await tokens().addColumn('last_used_at', 'text').execute();
  await db.schema.alterTable('queue_jobs').addColumn('token_id', 'integer').execute();
}
