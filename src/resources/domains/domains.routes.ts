// /domains (API guide "Domains", "Compatibility with existing clients"): list with filters, one by
// name, PATCH of the presence flags (202 with a queue-job when it turns DNSSEC on or off).
import { actorOf, readWithToken } from '../../auth/plugin.js';
import type { LinkBuilder } from '../../jsonapi/document.js';
import { updateRoute } from '../../jsonapi/update.js';
import type { QueueJobRow } from '../../queue/jobs.js';
import { acceptedResource } from '../accepted.js';
import type { TypedApp } from '../../jsonapi/typed-app.js';
import { readRoutes } from '../../jsonapi/read-routes.js';
import { DOMAIN_FILTERS, DomainNameParam, DomainSchemas, DomainUpdateBody, domainResource } from './domains.schema.js';
import { aceOf, sameDomainName } from '../../domain-name.js';
import type { DomainsService } from './domains.service.js';
import type { DomainRow } from './domains.repository.js';

export function domainsRoutes(app: TypedApp, service: DomainsService, links: LinkBuilder) {
  const toResource = (row: Parameters<typeof domainResource>[0]) => domainResource(row, links);

  readRoutes(app, links, {
    segment: 'domains',
    filters: DOMAIN_FILTERS,
    schemas: DomainSchemas,
    summaries: { list: 'List domains; filters owner_id, package_id', one: 'One domain (name in Unicode or ACE form)' },
    key: { name: 'name', schema: DomainNameParam },
    oneErrors: { invalid_api_data: 'the name is not ACE-encodable (no domain can have it)' },
    list: (request, q) => service.list(actorOf(request), q.filters, q.page),
    get: (request, name) => service.get(actorOf(request), name, (ace) => readWithToken<DomainRow>(request, ace)),
    toResource,
    // One domain by a name that has an ACE form is read in the statement that checks the token
    // (docs/decisions/0012-request-path.md); other names answer 404 or 422 after the token is
    // looked up alone.
    tokenReads: {
      one: {
        key: 'name',
        args: (request) => {
          const ace = aceOf((request.params as { name?: string }).name ?? '');
          return ace === null ? null : [ace];
        },
        run: (hash, ace) => service.oneWithToken(hash, ace as string),
      },
    },
  });

  updateRoute(app, links, {
    segment: 'domains',
    schemas: DomainSchemas,
    key: { name: 'name', schema: DomainNameParam },
    body: DomainUpdateBody,
    summary: 'Set presence.dns_update_lock, presence.dns_migration_mode.enabled or presence.dnssec.enabled (extension)',
    errors: {
      invalid_state: 'the domain is not used in a package, so it has no presence flags',
      invalid_api_data: 'the name is not ACE-encodable, or the body does not fit; `source.pointer` names the member',
    },
    // `data.id` may name the domain in any spelling (Unicode or ACE, any case).
    match: { target: (name) => service.requireAce(name), same: sameDomainName },
    update: (request, name, attributes, precondition) => service.updatePresence(actorOf(request), name, attributes.presence, precondition),
    toResource,
    // A change of presence.dnssec.enabled runs as a job: 202 with the domain and links.queue-job (API guide "DNSSEC (extension)").
    accepted: {
      description: 'Accepted: presence.dnssec.enabled changed whether the zone is signed; the job in `links.queue-job` is done once every DNS server serves it so (extension)',
      send: (request, reply, resource, job) => acceptedResource(request, reply, links, resource, job as QueueJobRow, { tagged: true }),
    },
  });
}
