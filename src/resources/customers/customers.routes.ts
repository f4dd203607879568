// /customers (spec §4.2): list, one, PATCH by the reseller.
import type { FastifyInstance } from 'fastify';
import type { Static } from 'typebox';
import { actorOf } from '../../auth/plugin.js';
import type { LinkBuilder } from '../../jsonapi/document.js';
import { parseListQuery } from '../../jsonapi/query.js';
import { listDocument, resourceDocument } from '../../jsonapi/respond.js';
import { IdParam, ListQueryString } from '../../jsonapi/schema.js';
import { assertUpdateTarget } from '../../jsonapi/update.js';
import { CUSTOMER_FILTERS, CustomerUpdateBody, customerResource } from './customers.schema.js';
import type { CustomersService } from './customers.service.js';

export function customersRoutes(app: FastifyInstance, service: CustomersService, links: LinkBuilder) {
  const toResource = (row: Parameters<typeof customerResource>[0]) => customerResource(row, links);

  app.get('/customers', { schema: { tags: ['customers'], summary: 'List customers (no filters)', querystring: ListQueryString(CUSTOMER_FILTERS) } }, async (request) => {
    const q = parseListQuery(request.query as Record<string, unknown>, CUSTOMER_FILTERS);
    return listDocument(request, links, q, await service.list(actorOf(request), q.page), toResource);
  });

  app.get('/customers/:id', { schema: { tags: ['customers'], summary: 'One customer', params: IdParam } }, async (request) => {
    const { id } = request.params as Static<typeof IdParam>;
    return resourceDocument(request, links, toResource(await service.get(actorOf(request), id)));
  });

  app.patch(
    '/customers/:id',
    { schema: { tags: ['customers'], summary: 'Set is_login_disabled or external_customer_id (resellers)', params: IdParam, body: CustomerUpdateBody } },
    async (request) => {
      const { id } = request.params as Static<typeof IdParam>;
      const { data } = request.body as Static<typeof CustomerUpdateBody>;
      assertUpdateTarget(data, 'customer', id);
      return resourceDocument(request, links, toResource(await service.update(actorOf(request), id, data.attributes)));
    },
  );
}
