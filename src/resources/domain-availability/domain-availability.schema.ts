// domain-availability (API guide "Domain availability"): the path parameter and the wire
// representation of one result.
import { Type } from 'typebox';
import { list, type LinkBuilder, type ResourceObject } from '../../jsonapi/document.js';
import { Nullable, resourceSchemas } from '../../jsonapi/schema.js';

export const MAX_NAMES = 10;

// No length or pattern rules here: the service judges the list, so every problem answers 422
// invalid_api_data naming the bad name rather than a generic schema error.
export const DomainNamesParam = Type.Object({
  domains: Type.String({
    description: `up to ${MAX_NAMES} domain names, comma-separated, Unicode or ACE (punycode), any letter case; duplicates are answered once`,
    examples: ['example.com,bücher.de'],
  }),
});

/** What availabilityResource emits (OpenAPI components DomainAvailability, DomainAvailabilityList). */
export const DomainAvailabilitySchemas = resourceSchemas('DomainAvailability', 'domain-availability', {
  description: 'The answer for one name; its id is the name in ACE form.',
  attributes: Type.Object({
    domain: Type.String({ description: 'the name in ACE (punycode) form' }),
    available: Nullable(Type.Boolean(), 'null: the check was not possible or failed; reason says why'),
    reason: Type.String({ description: 'why, in words for people' }),
  }),
  example: {
    type: 'domain-availability',
    id: 'new-name.example',
    attributes: { domain: 'new-name.example', available: null, reason: 'No RDAP server configured for .example.' },
    links: { self: 'https://api.example.net/domain-availability/new-name.example' },
  },
});

export interface Availability {
  /** ACE form. */
  domain: string;
  /** null: the check failed; `reason` says why. */
  available: boolean | null;
  reason: string;
}

export function availabilityResource(a: Availability, links: LinkBuilder): ResourceObject {
  return {
    type: 'domain-availability',
    id: a.domain,
    attributes: { domain: a.domain, available: a.available, reason: a.reason },
    links: { self: links.to('/domain-availability/', a.domain) },
  };
}

/**
 * The response: one result per name, in request order, in the list layout of the API guide
 * "Documents" (`links` first, then `data`, then `meta.total`) like every other collection; never
 * paged.
 */
export function availabilityDocument(results: Availability[], links: LinkBuilder, selfUrl: string) {
  return list(results.map((a) => availabilityResource(a, links)), selfUrl, results.length);
}
