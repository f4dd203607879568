// domain (API guide "Domains", "Compatibility with existing clients"): request schemas and the wire
// representation.
import { Type } from 'typebox';
import { EXTENSION, Nullable, StringEnum, Timestamp, ToOne, UpdateBody, resourceSchemas } from '../../jsonapi/schema.js';
import { ref, type LinkBuilder, type ResourceObject } from '../../jsonapi/document.js';
import type { DomainRow } from './domains.repository.js';

export const DOMAIN_FILTERS = ['owner_id', 'package_id'] as const;

// No maxLength: any name reaches the service, which answers 422 "Not ACE-encodable." for names
// no domain can have (too long included) instead of a schema error (API guide "Compatibility with
// existing clients").
// The example is a domain of the demo dataset (end customer 10002).
export const DomainNameParam = Type.Object({
  name: Type.String({ minLength: 1, description: 'domain name, Unicode or ACE (punycode), any letter case', examples: ['shop-demo.example'] }),
});

// Only the two presence flags and presence.dnssec.enabled (our extension) are writable (API guide "Domains"); `presence` is updated partially
// (API guide "Documents"): keys left out keep their value. Anything else is rejected with 422.
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
            dnssec: Type.Optional(
              Type.Object(
                { enabled: Type.Optional(Type.Boolean()) },
                { additionalProperties: false, description: 'sign the zone or serve it unsigned; a change answers 202 with a queue-job (API guide "DNSSEC (extension)")', ...EXTENSION },
              ),
            ),
          },
          { additionalProperties: false },
        ),
      ),
    },
    { additionalProperties: false },
  ),
  { id: 'shop-demo.example', attributes: { presence: { dns_update_lock: true } } },
);

/** What domainResource emits (OpenAPI components Domain, DomainDocument, DomainList). */
export const DomainSchemas = resourceSchemas('Domain', 'domain', {
  description: 'A domain; its id is its name in ACE (punycode) form.',
  attributes: Type.Object({
    name: Type.String({ description: 'the name, IDN labels in Unicode' }),
    name_ace: Type.String({ description: 'the name in ACE (punycode) form' }),
    registration: Nullable(
      Type.Object({ created_at: Timestamp(), expires_at: Timestamp(), status: Type.String({ description: 'e.g. active' }) }),
      'null when the domain is not registered with this service',
    ),
    presence: Nullable(
      Type.Object({
        dns_update_lock: Type.Boolean({ description: 'DNS update protection: while on, a change of plan leaves the base records alone' }),
        dns_migration_mode: Type.Object({ enabled: Type.Boolean() }),
        dnssec: Type.Object(
          {
            enabled: Type.Boolean({ description: 'whether the zone is to be signed (the choice; `state` says what is served)' }),
            state: StringEnum(
              ['unsigned', 'signed', 'rolling', 'disabling'],
              'what is served: unsigned; signed; rolling (signed, a new key on its way in); disabling (still signed, CDS/CDNSKEY ask the parent to drop the DS)',
            ),
            ds_records: Type.Array(Type.String(), { description: 'the DS records the registry should hold (what CDS publishes): `<key tag> <algorithm> 2 <SHA-256 digest>`; none while disabling' }),
            dnskeys: Type.Array(Type.String(), { description: 'the DNSKEY records served: `257 3 <algorithm> <base64>`' }),
          },
          { description: 'DNSSEC of the zone (API guide "DNSSEC (extension)")', ...EXTENSION },
        ),
      }),
      'null when the domain is not used in a package',
    ),
  }),
  relationships: Type.Object({
    owner: ToOne('customer'),
    package: ToOne('package', { nullable: true, description: 'data is null when the domain is not used in a package' }),
  }),
  example: {
    type: 'domain',
    id: 'shop-demo.example',
    attributes: {
      name: 'shop-demo.example',
      name_ace: 'shop-demo.example',
      registration: { created_at: '2026-11-22T03:51:28.686Z', expires_at: '2027-11-22T03:51:28.686Z', status: 'active' },
      presence: { dns_update_lock: false, dns_migration_mode: { enabled: false }, dnssec: { enabled: false, state: 'unsigned', ds_records: [], dnskeys: [] } },
    },
    relationships: { owner: { data: { type: 'customer', id: '10002' } }, package: { data: { type: 'package', id: '2' } } },
    links: { self: 'https://api.example.net/domains/shop-demo.example' },
  },
});

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
        ? {
            dns_update_lock: row.dns_update_lock === 1,
            dns_migration_mode: { enabled: row.dns_migration_mode === 1 },
            dnssec: row.dnssec_view ?? { enabled: row.dnssec === 1, state: row.dnssec === 1 ? 'signed' : 'unsigned', ds_records: [], dnskeys: [] },
          }
        : null,
    },
    relationships: { owner: ref('customer', row.customer_id), package: ref('package', row.package_id) },
    links: { self: links.to('/domains/', row.name) },
  };
}
