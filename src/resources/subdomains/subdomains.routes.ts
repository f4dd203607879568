// /subdomains (API guide "Subdomains", "Queue jobs"): list with filters, one subdomain, POST
// and PATCH answering 202 with the subdomain (links.queue-job), DELETE (our extension) answering
// 202 with the queue-job.
import { actorOf } from '../../auth/plugin.js';
import type { LinkBuilder } from '../../jsonapi/document.js';
import { operation } from '../../jsonapi/schema.js';
import { readRoutes } from '../../jsonapi/read-routes.js';
import { assertUpdateTarget } from '../../jsonapi/update.js';
import type { TypedApp } from '../../jsonapi/typed-app.js';
import { acceptedResource, deleteRoute } from '../accepted.js';
import { assertChecked, preconditionOf } from '../../jsonapi/conditional.js';
import { SUBDOMAIN_FILTERS, SubdomainCreateBody, SubdomainIdParam, SubdomainSchemas, SubdomainUpdateBody, subdomainResource } from './subdomains.schema.js';
import type { SubdomainsService } from './subdomains.service.js';

export function subdomainsRoutes(app: TypedApp, service: SubdomainsService, links: LinkBuilder) {
  const toResource = (row: Parameters<typeof subdomainResource>[0]) => subdomainResource(row, links);

  readRoutes(app, links, {
    segment: 'subdomains',
    filters: SUBDOMAIN_FILTERS,
    schemas: SubdomainSchemas,
    summaries: { list: 'List subdomains; filters package_id, domain', one: 'One subdomain' },
    key: { name: 'id', schema: SubdomainIdParam },
    list: (request, q) => service.list(actorOf(request), q.filters, q.page),
    get: (request, id) => service.get(actorOf(request), id),
    toResource,
  });

  const accepted = {
    status: 202 as const,
    document: SubdomainSchemas.document,
    description: 'Accepted: the subdomain as it will be; the site and its DNS records are live when the job in `links.queue-job` is done',
  };

  const create = operation('POST', {
    operationId: 'createSubdomain',
    tags: ['subdomains'],
    summary: 'Create a subdomain (webspace, redirect or e-mail only): 202 with the subdomain',
    body: SubdomainCreateBody,
    success: accepted,
    errors: {
      resource_not_found: 'domain is not one of your domains',
      conflict: 'the subdomain exists already, or a CNAME or a delegation (NS) of your DNS records holds the name',
      limit_reached: "the package has as many subdomains as its plan's max_subdomains allows",
      invalid_api_data: 'a value is not allowed (the detail says what is, e.g. the PHP versions); `source.pointer` names the member',
      service_unavailable: 'no web server is available yet',
    },
  });
  app.post('/subdomains', { schema: create }, async (request, reply) => {
    const { row, job } = await service.create(actorOf(request), request.body.data.attributes);
    return acceptedResource(request, reply, links, toResource(row), job);
  });

  const update = operation('PATCH', {
    operationId: 'updateSubdomain',
    tags: ['subdomains'],
    summary: 'Change a subdomain: webspace.path makes it a webspace, redirect.target a redirect; 202 with the subdomain',
    params: SubdomainIdParam,
    body: SubdomainUpdateBody,
    conditional: 'write',
    success: accepted,
    errors: {
      resource_not_found: 'no such subdomain among those you may see',
      id_mismatch: '`data.type` or `data.id` differ from the URL',
      invalid_state: 'a setting of another kind, redirect.dynamic or redirect_to_https of a redirect without target, or a subdomain being deleted',
      conflict: 'a CNAME or a delegation (NS) of your DNS records holds the name',
      invalid_api_data: 'a value is not allowed, or subdomain_type, domain or subdomain was sent (they cannot change)',
    },
  });
  // With If-Match only while the subdomain is as tagged; the answer carries its ETag (API guide "Safe retries").
  app.patch('/subdomains/:id', { schema: update, config: { conditional: true } }, async (request, reply) => {
    const { data } = request.body;
    const precondition = preconditionOf(request, toResource);
    assertUpdateTarget(data, 'subdomain', request.params.id);
    const { row, job } = await service.update(actorOf(request), request.params.id, data.attributes, precondition);
    assertChecked(precondition);
    return acceptedResource(request, reply, links, toResource(row), job, { tagged: true });
  });

  deleteRoute(app, links, {
    segment: 'subdomains',
    operationId: 'deleteSubdomain',
    params: SubdomainIdParam,
    summary: 'Delete a subdomain: its site and DNS records go, its files stay; 202 with the queue-job',
    accepted: 'the job that removes the site',
    errors: { resource_not_found: 'no such subdomain among those you may see' },
    remove: (request, id, precondition) => service.delete(actorOf(request), id, precondition),
    representation: toResource,
  });
}
