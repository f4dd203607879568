// queue-job (API guide "Queue jobs", "Compatibility with existing clients"): the wire
// representation. Every attribute and link value is a string or null: one client decodes them into
// a string map.
import { Type } from 'typebox';
import { ref, type LinkBuilder, type ResourceObject } from '../../jsonapi/document.js';
import { Nullable, StringEnum, Timestamp, ToOne, idParam, resourceSchemas } from '../../jsonapi/schema.js';
import type { QueueJobRow } from '../../queue/jobs.js';

/**
 * The one mapping from a job's `job_type` (the resource type, API guide "Documents") to the URL
 * segment of its object: `links.object` and `links[job_type]` are `<base>/<segment>/<object_id>`.
 */
export const JOB_TYPE_SEGMENTS = {
  'dns-record': 'dns-records',
  database: 'databases',
  'email-address': 'email-addresses',
  subdomain: 'subdomains',
  'ssh-key': 'ssh-keys',
  domain: 'domains',
} as const;
type ShownJobType = keyof typeof JOB_TYPE_SEGMENTS;
const JOB_TYPES = Object.keys(JOB_TYPE_SEGMENTS) as ShownJobType[];
const isJobType = (t: string): t is ShownJobType => Object.hasOwn(JOB_TYPE_SEGMENTS, t);

export const QUEUE_JOB_FILTERS = [] as const;

/** The example is the first job of a new database, e.g. after one DNS record was created. */
export const QueueJobIdParam = idParam('1');

/** What queueJobResource emits (OpenAPI components QueueJob, QueueJobDocument, QueueJobList). */
export const QueueJobSchemas = resourceSchemas('QueueJob', 'queue-job', {
  description: 'An asynchronous change and its progress. Every attribute and link is a string or null.',
  attributes: Type.Object({
    job_type: Type.String({ description: 'the type of the object the job changes, e.g. dns-record' }),
    status: StringEnum(['pending', 'done', 'failed'], 'done once the change is live; failed when it could not be made'),
    action: StringEnum(['create', 'update', 'delete']),
    created_at: Timestamp(),
    finished_at: Nullable(Timestamp(), 'when the job finished; null while pending'),
    error: Nullable(Type.String(), 'why the job failed; null otherwise'),
  }),
  relationships: Type.Object({ owner: ToOne('customer') }),
  links: Type.Object({
    self: Type.String({ description: 'URL of this job' }),
    'queue-job': Type.String({ description: 'URL of this job' }),
    object: Nullable(Type.String(), 'URL of the object the job changes'),
    // links[job_type] names the object too (lego reads links.dns-record); one of these per job.
    ...Object.fromEntries(JOB_TYPES.map((t) => [t, Type.Optional(Nullable(Type.String(), `on a job of type ${t}: the same URL as object`))])),
  }),
  example: {
    type: 'queue-job',
    id: '1',
    attributes: { job_type: 'dns-record', status: 'pending', action: 'create', created_at: '2026-11-22T04:44:18.936Z', finished_at: null, error: null },
    relationships: { owner: { data: { type: 'customer', id: '10002' } } },
    links: {
      self: 'https://api.example.net/queue-jobs/1',
      'queue-job': 'https://api.example.net/queue-jobs/1',
      object: 'https://api.example.net/dns-records/29',
      'dns-record': 'https://api.example.net/dns-records/29',
    },
  },
});

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
    // lego reads links.<job_type> to learn a new record's id (API guide "Compatibility with
    // existing clients").
    links: { self, 'queue-job': self, object, [row.job_type]: object },
  };
}
