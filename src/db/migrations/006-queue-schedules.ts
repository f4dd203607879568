// Scheduled jobs (the daily usage refresh): one row per scheduled job definition
// with the time its next job is due. Whichever worker first moves `next_run_at` forward (a
// conditional update) enqueues the job in the same transaction, so several workers enqueue it once
// per period and a crash between the two leaves neither (src/queue/queue.repository.ts scheduleDue).
import type { Kysely } from 'kysely';
import type { Engine } from '../dialect.js';

export async function up(db: Kysely<any>, _engine: Engine): Promise<void> {
  await db.schema
    .createTable('queue_schedules')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('next_run_at', 'text', (c) => c.notNull())
    .execute();
}
