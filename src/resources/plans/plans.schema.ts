// plan (spec §2.5; API-NOTES §6): read-only limits and features of a package.
import type { LinkBuilder, ResourceObject } from '../../jsonapi/document.js';
import type { PlanRow } from './plans.repository.js';

export const PLAN_FILTERS = [] as const;

/** A plan's limits and features, as the API and the operator CLI show them. */
export const planAttributes = (row: PlanRow) => ({
  name: row.name,
  max_databases: row.max_databases,
  max_email_addresses: row.max_email_addresses,
  mailbox_quota_mb: row.mailbox_quota_mb,
  max_subdomains: row.max_subdomains,
  // Stored as JSON text on both engines (src/db/schema.ts).
  database_versions: JSON.parse(row.database_versions) as string[],
  php_versions: JSON.parse(row.php_versions) as string[],
  webspace_mb: row.webspace_mb,
});

export function planResource(row: PlanRow, links: LinkBuilder): ResourceObject {
  const id = String(row.id);
  return { type: 'plan', id, attributes: planAttributes(row), links: { self: links.to('/plans/', id) } };
}
