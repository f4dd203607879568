// /domains (spec §4.2, API-NOTES §1.10): list with filters, one by name, PATCH of the presence flags.
import type { FastifyInstance } from 'fastify';
import type { Static } from 'typebox';
import { actorOf } from '../../auth/plugin.js';
import type { LinkBuilder } from '../../jsonapi/document.js';
import { parseListQuery } from '../../jsonapi/query.js';
import { listDocument, resourceDocument } from '../../jsonapi/respond.js';
import { ListQueryString } from '../../jsonapi/schema.js';
import { assertUpdateTarget } from '../../jsonapi/update.js';
import { DOMAIN_FILTERS, DomainNameParam, DomainUpdateBody, domainResource } from './domains.schema.js';
import { sameDomainName, type DomainsService } from './domains.service.js';

export function domainsRoutes(app: FastifyInstance, service: DomainsService, links: LinkBuilder) {
  const toResource = (row: Parameters<typeof domainResource>[0]) => domainResource(row, links);

  app.get(
    '/domains',
    { schema: { tags: ['domains'], summary: 'List domains; filters owner_id, package_id', querystring: ListQueryString(DOMAIN_FILTERS) } },
    async (request) => {
      const q = parseListQuery(request.query as Record<string, unknown>, DOMAIN_FILTERS);
      return listDocument(request, links, q, await service.list(actorOf(request), q.filters, q.page), toResource);
    },
  );

  app.get(
    '/domains/:name',
    { schema: { tags: ['domains'], summary: 'One domain (name in Unicode or ACE form)', params: DomainNameParam } },
    async (request) => {
      const { name } = request.params as Static<typeof DomainNameParam>;
      return resourceDocument(request, links, toResource(await service.get(actorOf(request), name)));
    },
  );

  app.patch(
    '/domains/:name',
    {
      schema: {
        tags: ['domains'],
        summary: 'Set presence.dns_update_lock or presence.dns_migration_mode.enabled',
        params: DomainNameParam,
        body: DomainUpdateBody,
      },
    },
    async (request) => {
      const { name } = request.params as Static<typeof DomainNameParam>;
      const { data } = request.body as Static<typeof DomainUpdateBody>;
      assertUpdateTarget(data, 'domain', service.requireAce(name), sameDomainName);
      return resourceDocument(request, links, toResource(await service.updatePresence(actorOf(request), name, data.attributes.presence)));
    },
  );
}
