// package (spec §2.4; API-NOTES §6): read-only; its relationships link to every object assigned to it.
import { ref, type LinkBuilder, type Relationship, type ResourceObject } from '../../jsonapi/document.js';
import type { PackageRow } from './packages.repository.js';

export const PACKAGE_FILTERS = ['owner_id', 'plan_id', 'linux_user'] as const;

/** Lists that take `filter[package_id]`: relationship name = URL segment. */
const ASSIGNED = ['domains', 'subdomains', 'databases', 'email-addresses', 'dns-records'] as const;

export function packageResource(row: PackageRow, links: LinkBuilder): ResourceObject {
  const id = String(row.id);
  const relationships: Record<string, Relationship> = {
    owner: ref('customer', row.customer_id),
    plan: { ...ref('plan', row.plan_id), links: { related: links.to('/plans/', String(row.plan_id)) } },
  };
  // Raw brackets, as clients write filters themselves (API-NOTES §1.9); the id is a number.
  for (const segment of ASSIGNED) relationships[segment] = { links: { related: links.to(`/${segment}?filter[package_id]=${id}`) } };
  return {
    type: 'package',
    id,
    attributes: { name: row.name, linux_user: row.linux_user, created_at: row.created_at },
    relationships,
    links: { self: links.to('/packages/', id) },
  };
}
