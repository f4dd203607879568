// domain-availability (spec §2.11, §4.2, §4.3.7; API-NOTES §6): the path parameter and the wire
// representation of one result.
import { Type } from 'typebox';
import { list, type LinkBuilder, type ResourceObject } from '../../jsonapi/document.js';

export const MAX_NAMES = 10;

// No length or pattern rules here: the service judges the list, so every problem answers 422
// invalid_api_data naming the bad name rather than a generic schema error.
export const DomainNamesParam = Type.Object({
  domains: Type.String({
    description: `up to ${MAX_NAMES} domain names, comma-separated, Unicode or ACE (punycode), any letter case; duplicates are answered once`,
    examples: ['example.com,bücher.de'],
  }),
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
 * The response: one result per name, in request order, in the list layout of API-NOTES §2
 * (`links` first, then `data`, then `meta.total`) like every other collection; never paged.
 */
export function availabilityDocument(results: Availability[], links: LinkBuilder, selfUrl: string) {
  return list(results.map((a) => availabilityResource(a, links)), selfUrl, results.length);
}
