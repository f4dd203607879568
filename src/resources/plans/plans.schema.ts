// plan (API guide "Plans"): read-only limits and features of a package.
import { Type } from 'typebox';
import type { LinkBuilder, ResourceObject } from '../../jsonapi/document.js';
import { EXTENSION, idParam, resourceSchemas } from '../../jsonapi/schema.js';
import type { PlanRow } from './plans.repository.js';

export const PLAN_FILTERS = [] as const;

/** The example is the plan the demo dataset's reseller sells. */
export const PlanIdParam = idParam('2');

const Count = (description: string) => Type.Integer({ minimum: 0, description });

/** What planResource emits (OpenAPI components Plan, PlanDocument, PlanList). */
export const PlanSchemas = resourceSchemas('Plan', 'plan', {
  attributes: Type.Object({
    name: Type.String(),
    max_databases: Count('databases a package may have'),
    max_email_addresses: Count('e-mail addresses a package may have'),
    mailbox_quota_mb: Count('size of one mailbox, in MB'),
    max_subdomains: Count('subdomains a package may have'),
    database_versions: Type.Array(Type.String(), { description: 'database servers a database can be created on, e.g. mariadb-10.11' }),
    php_versions: Type.Array(Type.String(), { description: 'PHP versions a subdomain can use, e.g. 8.4' }),
    webspace_mb: Count('web space of a package, in MB'),
    recipients_per_hour: Count('recipients each mailbox may send to per hour through authenticated SMTP; more are deferred (4xx) until the hour allows them'),
    ssh_keys_per_package: Type.Integer({ ...EXTENSION, minimum: 0, description: 'SSH keys a package may hold for SFTP logins (an addition to the original API)' }),
  }),
  example: {
    type: 'plan',
    id: '2',
    attributes: {
      name: 'Reseller Starter',
      max_databases: 2,
      max_email_addresses: 20,
      mailbox_quota_mb: 2048,
      max_subdomains: 10,
      database_versions: ['mariadb-10.11'],
      php_versions: ['8.3', '8.4', '8.5'],
      webspace_mb: 10240,
      recipients_per_hour: 500,
      ssh_keys_per_package: 10,
    },
    links: { self: 'https://api.example.net/plans/2' },
  },
});

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
  recipients_per_hour: row.recipients_per_hour,
  ssh_keys_per_package: row.ssh_keys_per_package,
});

export function planResource(row: PlanRow, links: LinkBuilder): ResourceObject {
  const id = String(row.id);
  return { type: 'plan', id, attributes: planAttributes(row), links: { self: links.to('/plans/', id) } };
}
