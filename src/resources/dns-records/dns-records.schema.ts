// dns-record (spec §2.6, §4.2; API-NOTES §1.11, §6): the create body and the wire representation.
//
// Attribute order is fixed by API-NOTES §6: `record_type, name, name_ace, fqdn, fqdn_ace, domain,
// data, ttl, tags`. acme.sh cuts list documents apart by brackets (API-NOTES §1.11): `tags` is the
// only array in a record and never its first attribute, no attribute name starts with `id`, and a
// record has no relationships.
//
// Choices where the spec is silent:
// - `name` is the owner name relative to the domain with IDN labels in Unicode, `""` at the apex;
//   `fqdn` is `name.domain` in Unicode (no trailing dot); the `_ace` forms are punycode.
// - `domain` is the domain's id (its ACE name), the value `filter[domain]` and the domains
//   resource use; its Unicode form is the tail of `fqdn`.
// - No `state` attribute: a record is listed from the moment POST accepted it until its delete job
//   has removed it; whether the change is live is the job's `status` (spec §3.1).
import { Type } from 'typebox';
import { CreateBody, Nullable } from '../../jsonapi/schema.js';
import type { LinkBuilder, ResourceObject } from '../../jsonapi/document.js';
import { toUnicode } from '../domains/domain-name.js';
import { fqdnOf, unicodeName } from './dns-records.validate.js';
import type { DnsRecordRow } from './dns-records.repository.js';

export const DNS_RECORD_FILTERS = ['domain', 'package_id', 'record_type'] as const;

// Types and ranges are judged by dns-records.validate.ts, so every problem points at its field
// with a specific detail; the schema only fixes the shape (unknown attributes → 422).
export const DnsRecordCreateBody = CreateBody(
  'dns-record',
  Type.Object(
    {
      record_type: Type.String({ description: 'A, AAAA, CNAME, MX, TXT, SRV, CAA, NS (below the apex), DS or TLSA' }),
      name: Type.Optional(Type.String({ maxLength: 1024, description: 'owner name relative to domain; "" or "@" (or left out) is the apex' })),
      domain: Type.String({ maxLength: 1024, description: 'a presence domain of the caller, without subdomains' }),
      data: Type.String({ description: 'record content in presentation form, e.g. MX "10 mail.example.com"' }),
      ttl: Type.Optional(Nullable(Type.Integer({ description: 'seconds, 300 to 86400; default DNS_DEFAULT_TTL' }))),
    },
    { additionalProperties: false },
  ),
);

export function dnsRecordResource(row: DnsRecordRow, links: LinkBuilder): ResourceObject {
  const id = String(row.id);
  return {
    type: 'dns-record',
    id,
    attributes: {
      record_type: row.record_type,
      name: unicodeName(row.name),
      name_ace: row.name,
      fqdn: fqdnOf(unicodeName(row.name), toUnicode(row.domain)),
      fqdn_ace: fqdnOf(row.name, row.domain),
      domain: row.domain,
      data: row.data,
      ttl: row.ttl,
      tags: [row.tag],
    },
    links: { self: links.to('/dns-records/', id) },
  };
}
