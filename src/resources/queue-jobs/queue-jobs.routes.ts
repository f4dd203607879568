// /queue-jobs (spec §4.2): pending jobs of the caller's scope, and one job by id.
import type { FastifyInstance } from 'fastify';
import type { Static } from 'typebox';
import { actorOf } from '../../auth/plugin.js';
import type { LinkBuilder } from '../../jsonapi/document.js';
import { parseListQuery } from '../../jsonapi/query.js';
import { listDocument, resourceDocument } from '../../jsonapi/respond.js';
import { IdParam, ListQueryString } from '../../jsonapi/schema.js';
import { QUEUE_JOB_FILTERS, queueJobResource } from './queue-jobs.schema.js';
import type { QueueJobsService } from './queue-jobs.service.js';

export function queueJobsRoutes(app: FastifyInstance, service: QueueJobsService, links: LinkBuilder) {
  const toResource = (row: Parameters<typeof queueJobResource>[0]) => queueJobResource(row, links);

  app.get(
    '/queue-jobs',
    { schema: { tags: ['queue-jobs'], summary: 'List pending jobs (no filters)', querystring: ListQueryString(QUEUE_JOB_FILTERS) } },
    async (request) => {
      const q = parseListQuery(request.query as Record<string, unknown>, QUEUE_JOB_FILTERS);
      return listDocument(request, links, q, await service.listPending(actorOf(request), q.page), toResource);
    },
  );

  app.get(
    '/queue-jobs/:id',
    { schema: { tags: ['queue-jobs'], summary: 'One job: pending, done (until purged 24 h after completion) or failed', params: IdParam } },
    async (request) => {
      const { id } = request.params as Static<typeof IdParam>;
      return resourceDocument(request, links, toResource(await service.get(actorOf(request), id)));
    },
  );
}
