// Outbound limits per mailbox (docs/decisions/0020-outbound-limits.md): a plan says how many
// recipients each of its mailboxes may send to per hour through authenticated submission, and the
// mail directory row of every mailbox carries its plan's number, so the mail server's policy
// service reads it with the read-only role that may read the mail directory alone.
// Every plan gets 500 and so does every mailbox: existing rows agree with their plans at once.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('plans').addColumn('recipients_per_hour', 'integer', (c) => c.notNull().defaultTo(500)).execute();
  await db.schema.alterTable('mail_users').addColumn('recipients_per_hour', 'integer', (c) => c.notNull().defaultTo(500)).execute();
}
