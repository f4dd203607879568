// /packages (API guide "Packages"): list with filters, one package. Read-only.
import { actorOf, idTokenRead, readWithToken } from '../../auth/plugin.js';
import type { LinkBuilder } from '../../jsonapi/document.js';
import type { TypedApp } from '../../jsonapi/typed-app.js';
import { readRoutes } from '../../jsonapi/read-routes.js';
import { PACKAGE_FILTERS, PackageIdParam, PackageSchemas, packageResource } from './packages.schema.js';
import type { PackagesService } from './packages.service.js';
import type { PackageRow } from './packages.repository.js';

export function packagesRoutes(app: TypedApp, service: PackagesService, links: LinkBuilder) {
  readRoutes(app, links, {
    segment: 'packages',
    filters: PACKAGE_FILTERS,
    schemas: PackageSchemas,
    key: { name: 'id', schema: PackageIdParam },
    summaries: { list: 'List packages; filters owner_id, plan_id, linux_user', one: 'One package' },
    list: (request, q) => service.list(actorOf(request), q.filters, q.page),
    get: (request, id) => service.get(actorOf(request), id, (n) => readWithToken<PackageRow>(request, n)),
    toResource: (row) => packageResource(row, links),
    // One package by an id that can exist is read in the statement that checks the token
    // (docs/decisions/0012-request-path.md).
    tokenReads: { one: idTokenRead((hash, n) => service.oneWithToken(hash, n)) },
  });
}
