// /domain-availability/{names} (API guide "Domain availability", "Authentication"): the one route
// that also accepts a reseller's legacy password (Basic auth), as the replacement of
// /getDomainStatus.
import { actorOf } from '../../auth/plugin.js';
import type { LinkBuilder } from '../../jsonapi/document.js';
import type { TypedApp } from '../../jsonapi/typed-app.js';
import { addDocumentSchemas, operation } from '../../jsonapi/schema.js';
import { DomainAvailabilitySchemas, DomainNamesParam, MAX_NAMES, availabilityDocument } from './domain-availability.schema.js';
import type { DomainAvailabilityService } from './domain-availability.service.js';

export function domainAvailabilityRoutes(app: TypedApp, service: DomainAvailabilityService, links: LinkBuilder) {
  addDocumentSchemas(app, DomainAvailabilitySchemas.resource, DomainAvailabilitySchemas.list);
  const schema = operation('GET', {
    operationId: 'checkDomainAvailability',
    tags: ['domain-availability'],
    summary: `Check whether up to ${MAX_NAMES} comma-separated domain names are available`,
    description:
      "Answers from the service's own domain registry and, where configured, RDAP lookups with a timeout. " +
      '`available` is true, false, or null when the check failed; `reason` says why. ' +
      "Accepts an API token or, on this endpoint only, a reseller's legacy password via HTTP Basic " +
      '(user name: customer number without leading zeros).',
    params: DomainNamesParam,
    success: { status: 200, document: DomainAvailabilitySchemas.list, description: 'One answer per distinct name, in the order given; never paged' },
    errors: {
      invalid_api_data: `no name, more than ${MAX_NAMES} distinct names, or a name that is no domain name (the detail says why); \`source.parameter\` is \`domains\``,
    },
  });
  // The original service's status endpoint, switched off on 2026-08-01 (API guide "Domain availability").
  app.retirePath(
    '/getDomainStatus',
    '/getDomainStatus was switched off on 2026-08-01. Use GET /domain-availability/{names} instead: ' +
      "up to 10 comma-separated domain names, with an API token or the reseller's legacy password.",
  );
  app.get(
    '/domain-availability/:domains',
    { config: { auth: 'token-or-legacy' }, schema },
    async (request) => {
      actorOf(request); // authenticated by the hook; fails closed if it did not run
      const { domains } = request.params;
      const names = service.parseNames(domains);
      return availabilityDocument(await service.check(names, request.log), links, links.request(request.url));
    },
  );
}
