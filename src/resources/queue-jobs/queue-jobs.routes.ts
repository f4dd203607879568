// /queue-jobs (API guide "Queue jobs"): pending jobs of the caller's scope, and one job by id.
import { actorOf } from '../../auth/plugin.js';
import type { LinkBuilder } from '../../jsonapi/document.js';
import type { TypedApp } from '../../jsonapi/typed-app.js';
import { readRoutes } from '../../jsonapi/read-routes.js';
import { QUEUE_JOB_FILTERS, QueueJobIdParam, QueueJobSchemas, queueJobResource } from './queue-jobs.schema.js';
import type { QueueJobsService } from './queue-jobs.service.js';

export function queueJobsRoutes(app: TypedApp, service: QueueJobsService, links: LinkBuilder) {
  readRoutes(app, links, {
    segment: 'queue-jobs',
    filters: QUEUE_JOB_FILTERS,
    schemas: QueueJobSchemas,
    key: { name: 'id', schema: QueueJobIdParam },
    summaries: { list: 'List pending jobs (no filters)', one: 'One job: pending, done (until purged 24 h after completion) or failed' },
    list: (request, q) => service.listPending(actorOf(request), q.page),
    get: (request, id) => service.get(actorOf(request), id),
    toResource: (row) => queueJobResource(row, links),
  });
}
