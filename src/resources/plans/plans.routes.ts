// /plans (spec §4.2): list (no filters) and one plan. Read-only.
import type { FastifyInstance } from 'fastify';
import type { Static } from 'typebox';
import { actorOf } from '../../auth/plugin.js';
import type { LinkBuilder } from '../../jsonapi/document.js';
import { parseListQuery } from '../../jsonapi/query.js';
import { listDocument, resourceDocument } from '../../jsonapi/respond.js';
import { IdParam, ListQueryString } from '../../jsonapi/schema.js';
import { PLAN_FILTERS, planResource } from './plans.schema.js';
import type { PlansService } from './plans.service.js';

export function plansRoutes(app: FastifyInstance, service: PlansService, links: LinkBuilder) {
  const toResource = (row: Parameters<typeof planResource>[0]) => planResource(row, links);

  app.get(
    '/plans',
    { schema: { tags: ['plans'], summary: 'List plans (no filters)', querystring: ListQueryString(PLAN_FILTERS) } },
    async (request) => {
      const q = parseListQuery(request.query as Record<string, unknown>, PLAN_FILTERS);
      return listDocument(request, links, q, await service.list(actorOf(request), q.page), toResource);
    },
  );

  app.get('/plans/:id', { schema: { tags: ['plans'], summary: 'One plan', params: IdParam } }, async (request) => {
    const { id } = request.params as Static<typeof IdParam>;
    return resourceDocument(request, links, toResource(await service.get(actorOf(request), id)));
  });
}
