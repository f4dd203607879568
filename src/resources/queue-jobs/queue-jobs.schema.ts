// queue-job (spec §2.1, §3.1; API-NOTES §1.4–1.6, §5): the wire representation. Every attribute and
// link value is a string or null: one client decodes them into a string map (API-NOTES §1.6).
import { ref, type LinkBuilder, type ResourceObject } from '../../jsonapi/document.js';
import type { QueueJobRow } from './queue-jobs.repository.js';

/**
 * The one mapping from a job's `job_type` (the resource type, spec §2.0) to the URL segment of its
 * object: `links.object` and `links[job_type]` are `<base>/<segment>/<object_id>`.
 */
export const JOB_TYPE_SEGMENTS = {
  'dns-record': 'dns-records',
  database: 'databases',
  'email-address': 'email-addresses',
  subdomain: 'subdomains',
} as const;

export type JobType = keyof typeof JOB_TYPE_SEGMENTS;
export type JobAction = 'create' | 'update' | 'delete';
/** `failed` is our extension for jobs that exhausted their retries (API-NOTES §5). */
export type JobStatus = 'pending' | 'done' | 'failed';

export const QUEUE_JOB_FILTERS = [] as const;

const isJobType = (t: string): t is JobType => Object.hasOwn(JOB_TYPE_SEGMENTS, t);

/** `<base>/dns-records/42` for a dns-record job on object 42; null when there is no object. */
export function jobObjectLink(jobType: string, objectId: string | null, links: LinkBuilder): string | null {
  if (objectId === null || !isJobType(jobType)) return null;
  return links.to(`/${JOB_TYPE_SEGMENTS[jobType]}/`, objectId);
}

export function queueJobResource(row: QueueJobRow, links: LinkBuilder): ResourceObject {
  const id = String(row.id);
  const self = links.to('/queue-jobs/', id);
  const object = jobObjectLink(row.job_type, row.object_id, links);
  return {
    type: 'queue-job',
    id,
    attributes: {
      job_type: row.job_type,
      status: row.status,
      action: row.action,
      created_at: row.created_at,
      finished_at: row.finished_at,
      error: row.error,
    },
    relationships: { owner: ref('customer', row.customer_id) },
    // lego reads links.<job_type> to learn a new record's id (API-NOTES §1.3, §1.4).
    links: { self, 'queue-job': self, object, [row.job_type]: object },
  };
}
