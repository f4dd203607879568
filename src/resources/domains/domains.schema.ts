// domain (spec §2.3, §4.2; API-NOTES §1.10, §6): request schemas and the wire representation.
import { Type } from 'typebox';
import { UpdateBody } from '../../jsonapi/schema.js';
import { ref, type LinkBuilder, type ResourceObject } from '../../jsonapi/document.js';
import type { DomainRow } from './domains.repository.js';

export const DOMAIN_FILTERS = ['owner_id', 'package_id'] as const;

// No maxLength: any name reaches the service, which answers 422 "Not ACE-encodable." for names
// no domain can have (too long included) instead of a schema error (API-NOTES §1.10).
export const DomainNameParam = Type.Object({
  name: Type.String({ minLength: 1, description: 'domain name, Unicode or ACE (punycode), any letter case' }),
});

// Only the two presence flags are writable (spec §4.2); `presence` is updated partially (§2.0):
// keys left out keep their value. Anything else is rejected with 422.
export const DomainUpdateBody = UpdateBody(
  'domain',
  Type.Object(
    {
      presence: Type.Optional(
        Type.Object(
          {
            dns_update_lock: Type.Optional(Type.Boolean()),
            dns_migration_mode: Type.Optional(
              Type.Object({ enabled: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
            ),
          },
          { additionalProperties: false },
        ),
      ),
    },
    { additionalProperties: false },
  ),
);

export function domainResource(row: DomainRow, links: LinkBuilder): ResourceObject {
  return {
    type: 'domain',
    id: row.name,
    attributes: {
      name: row.name_unicode,
      name_ace: row.name,
      registration: row.is_registered
        ? { created_at: row.registration_created_at, expires_at: row.registration_expires_at, status: row.registration_status }
        : null,
      presence: row.has_presence
        ? { dns_update_lock: row.dns_update_lock === 1, dns_migration_mode: { enabled: row.dns_migration_mode === 1 } }
        : null,
    },
    relationships: { owner: ref('customer', row.customer_id), package: ref('package', row.package_id) },
    links: { self: links.to('/domains/', row.name) },
  };
}
