// dns-record: the create body and the wire representation (API guide "DNS records"). The attribute
// order is fixed and `tags` is never first: acme.sh cuts list documents apart by brackets (API
// guide "Compatibility with existing clients"). No `state`: whether a change is live is its job's.
import { Type } from 'typebox';
import { CreateBody, Nullable, StringEnum, idParam, resourceSchemas } from '../../jsonapi/schema.js';
import type { LinkBuilder, ResourceObject } from '../../jsonapi/document.js';
import { fqdnOf, toUnicode, unicodeName } from '../../domain-name.js';
import type { DnsRecordRow } from './dns-records.repository.js';
import { RECORD_TYPES, TTL_MAX, TTL_MIN } from './dns-records.rules.js';

export const DNS_RECORD_FILTERS = ['domain', 'package_id', 'record_type'] as const;

// Types and ranges are judged by dns-records.validate.ts, so every problem points at its field
// with a specific detail; the schema only fixes the shape (unknown attributes → 422). The examples
// are annotations (they do not validate) and must be accepted: test/ops/openapi.test.ts sends them.
export const DnsRecordCreateBody = CreateBody(
  'dns-record',
  Type.Object(
    {
      record_type: Type.String({ description: `${RECORD_TYPES.join(', ')} (NS below the apex only); any letter case`, examples: ['TXT'] }),
      name: Type.Optional(
        Type.String({ maxLength: 1024, description: 'owner name relative to domain; "" or "@" (or left out) is the apex', examples: ['_acme-challenge'] }),
      ),
      domain: Type.String({ maxLength: 1024, description: 'a presence domain of yours, without subdomains', examples: ['shop-demo.example'] }),
      data: Type.String({ description: 'record content in presentation form, e.g. MX "10 mail.example.com"', examples: ['gfj9Xq-Rg85nM'] }),
      ttl: Type.Optional(
        Nullable(Type.Integer({ examples: [3600] }), `seconds, ${TTL_MIN} to ${TTL_MAX}; left out or null: the server's default (3600 unless the operator changed it)`),
      ),
    },
    { additionalProperties: false },
  ),
  // A domain of the demo dataset (end customer 10002, seen by its reseller too).
  { record_type: 'TXT', name: '_acme-challenge', domain: 'shop-demo.example', data: 'gfj9Xq-Rg85nM', ttl: 300 },
);

/** The example is the first record of a new demo database, a base record of reseller-demo.example. */
export const DnsRecordIdParam = idParam('1');

/** What dnsRecordResource emits (OpenAPI components DnsRecord, DnsRecordDocument, DnsRecordList). */
export const DnsRecordSchemas = resourceSchemas('DnsRecord', 'dns-record', {
  attributes: Type.Object({
    record_type: StringEnum([...RECORD_TYPES]),
    name: Type.String({ description: 'owner name relative to the domain, IDN labels in Unicode; "" at the apex' }),
    name_ace: Type.String({ description: 'the same in ACE (punycode) form' }),
    fqdn: Type.String({ description: 'the full name, without trailing dot' }),
    fqdn_ace: Type.String({ description: 'the same in ACE (punycode) form' }),
    domain: Type.String({ description: 'the id of the domain (its ACE name)' }),
    data: Type.String({ description: 'the content in presentation form, normalised' }),
    ttl: Type.Integer({ description: 'seconds' }),
    tags: Type.Array(StringEnum(['custom', 'base', 'managed']), {
      minItems: 1,
      maxItems: 1,
      description: 'custom: created through the API; base: from the plan\'s template; managed: kept by the service (cannot be deleted)',
    }),
  }),
  example: {
    type: 'dns-record',
    id: '12',
    attributes: {
      record_type: 'MX',
      name: '',
      name_ace: '',
      fqdn: 'shop-demo.example',
      fqdn_ace: 'shop-demo.example',
      domain: 'shop-demo.example',
      data: '10 mail.hostplane.test',
      ttl: 3600,
      tags: ['base'],
    },
    links: { self: 'https://api.example.net/dns-records/12' },
  },
});

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
