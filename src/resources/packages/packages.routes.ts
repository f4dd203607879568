// /packages (spec §4.2): list with filters, one package. Read-only.
import type { FastifyInstance } from 'fastify';
import type { Static } from 'typebox';
import { actorOf } from '../../auth/plugin.js';
import type { LinkBuilder } from '../../jsonapi/document.js';
import { parseListQuery } from '../../jsonapi/query.js';
import { listDocument, resourceDocument } from '../../jsonapi/respond.js';
import { IdParam, ListQueryString } from '../../jsonapi/schema.js';
import { PACKAGE_FILTERS, packageResource } from './packages.schema.js';
import type { PackagesService } from './packages.service.js';

export function packagesRoutes(app: FastifyInstance, service: PackagesService, links: LinkBuilder) {
  const toResource = (row: Parameters<typeof packageResource>[0]) => packageResource(row, links);

  app.get(
    '/packages',
    { schema: { tags: ['packages'], summary: 'List packages; filters owner_id, plan_id, linux_user', querystring: ListQueryString(PACKAGE_FILTERS) } },
    async (request) => {
      const q = parseListQuery(request.query as Record<string, unknown>, PACKAGE_FILTERS);
      return listDocument(request, links, q, await service.list(actorOf(request), q.filters, q.page), toResource);
    },
  );

  app.get('/packages/:id', { schema: { tags: ['packages'], summary: 'One package', params: IdParam } }, async (request) => {
    const { id } = request.params as Static<typeof IdParam>;
    return resourceDocument(request, links, toResource(await service.get(actorOf(request), id)));
  });
}
