// Jobs on one object run in the order they were enqueued (docs/decisions/0004-provisioning-seams.md
// "The job"): the claim looks for an older pending job of the same type on the same object, which
// this index answers.
import type { Kysely } from 'kysely';
import type { Engine } from '../dialect.js';

export async function up(db: Kysely<any>, _engine: Engine): Promise<void> {
  await db.schema.createIndex('queue_jobs_object').on('queue_jobs').columns(['job_type', 'object_id', 'status']).execute();
}
