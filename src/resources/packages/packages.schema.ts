// package (API guide "Packages"): read-only; its relationships link to every object assigned to it.
import { Type } from 'typebox';
import { ref, type LinkBuilder, type Relationship, type ResourceObject } from '../../jsonapi/document.js';
import { RelatedList, Timestamp, ToOne, idParam, resourceSchemas } from '../../jsonapi/schema.js';
import type { PackageRow } from './packages.repository.js';

export const PACKAGE_FILTERS = ['owner_id', 'plan_id', 'linux_user'] as const;

/** Lists that take `filter[package_id]` (API guide "Packages"): relationship name = URL segment. */
const ASSIGNED = ['domains', 'dns-records', 'databases', 'subdomains', 'email-addresses'] as const;

/** The example is the package of the demo dataset's end customer 10002. */
export const PackageIdParam = idParam('2');

/** What packageResource emits (OpenAPI components Package, PackageDocument, PackageList). */
export const PackageSchemas = resourceSchemas('Package', 'package', {
  attributes: Type.Object({
    name: Type.String(),
    linux_user: Type.String({ description: 'the system user the package runs as' }),
    created_at: Timestamp(),
  }),
  relationships: Type.Object({
    owner: ToOne('customer'),
    plan: ToOne('plan', { related: true }),
    ...Object.fromEntries(ASSIGNED.map((segment) => [segment, RelatedList(`the package's ${segment}: ${segment}?filter[package_id]=<id>`)])),
  }),
  example: {
    type: 'package',
    id: '2',
    attributes: { name: 'shop-demo.example', linux_user: 'demo_shop', created_at: '2026-11-22T03:51:28.685Z' },
    relationships: {
      owner: { data: { type: 'customer', id: '10002' } },
      plan: { data: { type: 'plan', id: '2' }, links: { related: 'https://api.example.net/plans/2' } },
      ...Object.fromEntries(ASSIGNED.map((segment) => [segment, { links: { related: `https://api.example.net/${segment}?filter[package_id]=2` } }])),
    },
    links: { self: 'https://api.example.net/packages/2' },
  },
});

export function packageResource(row: PackageRow, links: LinkBuilder): ResourceObject {
  const id = String(row.id);
  const relationships: Record<string, Relationship> = {
    owner: ref('customer', row.customer_id),
    plan: { ...ref('plan', row.plan_id), links: { related: links.to('/plans/', String(row.plan_id)) } },
  };
  // Raw brackets, as clients write filters themselves (API guide "Compatibility with existing
  // clients"); the id is a number.
  for (const segment of ASSIGNED) relationships[segment] = { links: { related: links.to(`/${segment}?filter[package_id]=${id}`) } };
  return {
    type: 'package',
    id,
    attributes: { name: row.name, linux_user: row.linux_user, created_at: row.created_at },
    relationships,
    links: { self: links.to('/packages/', id) },
  };
}
