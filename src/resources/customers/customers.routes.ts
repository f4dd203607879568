// /customers (API guide "Customers"): list, one, PATCH by the reseller.
import { actorOf, idTokenRead, readWithToken } from '../../auth/plugin.js';
import type { LinkBuilder } from '../../jsonapi/document.js';
import { updateRoute } from '../../jsonapi/update.js';
import type { TypedApp } from '../../jsonapi/typed-app.js';
import { readRoutes } from '../../jsonapi/read-routes.js';
import { CUSTOMER_FILTERS, CustomerIdParam, CustomerSchemas, CustomerUpdateBody, customerResource } from './customers.schema.js';
import type { CustomersService } from './customers.service.js';
import type { CustomerRow } from './customers.repository.js';

export function customersRoutes(app: TypedApp, service: CustomersService, links: LinkBuilder) {
  const toResource = (row: Parameters<typeof customerResource>[0]) => customerResource(row, links);

  readRoutes(app, links, {
    segment: 'customers',
    filters: CUSTOMER_FILTERS,
    schemas: CustomerSchemas,
    summaries: { list: 'List customers: you and, for a reseller, its end customers (no filters)', one: 'One customer' },
    key: { name: 'id', schema: CustomerIdParam },
    list: (request, q) => service.list(actorOf(request), q.page),
    get: (request, id) => service.get(actorOf(request), id, (n) => readWithToken<CustomerRow>(request, n)),
    toResource,
    // One customer by an id that can exist is read in the statement that checks the token
    // (docs/decisions/0012-request-path.md).
    tokenReads: { one: idTokenRead((hash, n) => service.oneWithToken(hash, n)) },
  });

  updateRoute(app, links, {
    segment: 'customers',
    schemas: CustomerSchemas,
    key: { name: 'id', schema: CustomerIdParam },
    body: CustomerUpdateBody,
    summary: 'Set is_login_disabled or external_customer_id of an end customer (its reseller only)',
    errors: {
      forbidden: "only the customer's reseller may change a customer",
      conflict: 'another customer of this reseller has this `external_customer_id`',
    },
    update: (request, id, attributes, precondition) => service.update(actorOf(request), id, attributes, precondition),
    toResource,
  });
}
