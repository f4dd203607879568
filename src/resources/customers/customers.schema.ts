// customer (API guide "Customers"): request schemas and the wire representation.
import { Type } from 'typebox';
import { Nullable, ToOne, UpdateBody, idParam, resourceSchemas } from '../../jsonapi/schema.js';
import { ref, type LinkBuilder, type ResourceObject } from '../../jsonapi/document.js';
import type { CustomerRow } from './customers.repository.js';

export const EXTERNAL_ID_PATTERN = '^[A-Za-z0-9._-]{1,64}$';

/** Examples name the demo dataset: end customer 10002 of reseller 10001. */
export const CustomerIdParam = idParam('10002');

export const CustomerUpdateBody = UpdateBody(
  'customer',
  Type.Object(
    {
      is_login_disabled: Type.Optional(Type.Boolean()),
      external_customer_id: Type.Optional(Nullable(Type.String({ pattern: EXTERNAL_ID_PATTERN }))),
    },
    { additionalProperties: false },
  ),
  { id: '10002', attributes: { external_customer_id: 'crm-4711' } },
);

/** What customerResource emits (OpenAPI components Customer, CustomerDocument, CustomerList). */
export const CustomerSchemas = resourceSchemas('Customer', 'customer', {
  attributes: Type.Object({
    organization: Nullable(Type.String()),
    name: Nullable(Type.String(), 'name of the main contact'),
    email: Nullable(Type.String(), 'e-mail address of the main contact'),
    phone: Nullable(Type.String(), 'phone number of the main contact'),
    is_reseller: Type.Boolean(),
    is_login_disabled: Type.Boolean({ description: 'blocks the customer menu, not the API' }),
    external_customer_id: Nullable(Type.String(), "the reseller's own id for this customer, unique among its customers"),
  }),
  relationships: Type.Object({
    reseller: ToOne('customer', { nullable: true, description: 'the reseller of an end customer; data is null for every other customer' }),
  }),
  example: {
    type: 'customer',
    id: '10002',
    attributes: {
      organization: 'Shop Demo UG',
      name: 'Sam Shop',
      email: 'sam@shop-demo.example',
      phone: '+49 30 5550101',
      is_reseller: false,
      is_login_disabled: false,
      external_customer_id: 'crm-4711',
    },
    relationships: { reseller: { data: { type: 'customer', id: '10001' } } },
    links: { self: 'https://api.example.net/customers/10002' },
  },
});

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
