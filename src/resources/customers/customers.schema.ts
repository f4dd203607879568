// customer (spec §2.2, API-NOTES §6): request schemas and the wire representation.
import { Type } from 'typebox';
import { Nullable, UpdateBody } from '../../jsonapi/schema.js';
import { ref, type LinkBuilder, type ResourceObject } from '../../jsonapi/document.js';
import type { CustomerRow } from './customers.repository.js';

export const EXTERNAL_ID_PATTERN = '^[A-Za-z0-9._-]{1,64}$';

export const CustomerUpdateBody = UpdateBody(
  'customer',
  Type.Object(
    {
      is_login_disabled: Type.Optional(Type.Boolean()),
      external_customer_id: Type.Optional(Nullable(Type.String({ pattern: EXTERNAL_ID_PATTERN }))),
    },
    { additionalProperties: false },
  ),
);

export const CUSTOMER_FILTERS = [] as const;

export function customerResource(row: CustomerRow, links: LinkBuilder): ResourceObject {
  const id = String(row.id);
  return {
    type: 'customer',
    id,
    attributes: {
      organization: row.organization,
      name: row.contact_name ?? null,
      email: row.contact_email ?? null,
      phone: row.contact_phone ?? null,
      is_reseller: row.is_reseller === 1,
      is_login_disabled: row.is_login_disabled === 1,
      external_customer_id: row.external_customer_id,
    },
    relationships: { reseller: ref('customer', row.reseller_id) },
    links: { self: links.to('/customers/', id) },
  };
}
