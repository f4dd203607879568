// The demo dataset (docs/operator-guide.md "The operator CLI"): one reseller with a legacy
// password, two end customers of it, one independent customer; each with a plan, a package, a
// domain that is both registered and present, and an API token. Loaded by `hostplane demo` and by
// `serve` on a new embedded database. Tokens and the password are random and exist in clear only in
// the result.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Admin } from './index.js';
import { DatabaseServersService, type DatabaseServerView } from './database-servers.service.js';

export type DemoRole = 'reseller' | 'end-customer' | 'customer';

/**
 * One customer of the dataset; key order is the order of `hostplane demo --json`
 * (docs/operator-guide.md "The operator CLI"; scripts rely on it).
 */
export interface DemoCustomer {
  id: string;
  role: DemoRole;
  reseller_id: string | null;
  token: string;
  package_id: string;
  domain: string;
  legacy_password: string | null;
}

export interface DemoDataset {
  base_url: string;
  customers: DemoCustomer[];
}

/** The dataset (what `demo --json` prints) and, for people, what became of DEMO_MARIADB_URL. */
export interface DemoLoad {
  data: DemoDataset;
  /** The server registered from DEMO_MARIADB_URL, or null. */
  databaseServer: DatabaseServerView | null;
  /** Why DEMO_MARIADB_URL could not be registered (the dataset is loaded all the same). */
  warnings: string[];
}

export interface DemoOptions {
  /** DEMO_MARIADB_URL: registered as `demo-db`, the default of the type and version it reports. */
  mariadbUrl?: string | null;
  db?: Kysely<Database>;
}

/** Name of the demo's database server. */
export const DEMO_DATABASE_SERVER = 'demo-db';

/**
 * PHP of the demo plans: the supported versions, then 8.2, which is what Debian 12 installs — so a
 * webspace on the local stack (deploy/local/up.sh) runs PHP out of the box (the default is the
 * first version the web server has).
 */
const DEMO_PHP_VERSIONS = ['8.3', '8.4', '8.5', '8.2'];

/** What every plan offers: the common default, and the demo server's own type and version. */
const planVersions = (server: DatabaseServerView | null) => [...new Set(['mariadb-10.11', ...(server ? [`${server.db_type}-${server.version}`] : [])])];

interface Spec {
  key: string;
  role: DemoRole;
  organization: string;
  contact: { name: string; email: string; phone: string };
  domain: string;
}

// Reserved `.example` names (RFC 2606): the demo never points at anybody's real domain.
const RESELLER: Spec = {
  key: 'reseller',
  role: 'reseller',
  organization: 'Reseller Demo GmbH',
  contact: { name: 'Rita Reseller', email: 'rita@reseller-demo.example', phone: '+49 30 5550100' },
  domain: 'reseller-demo.example',
};
const END_CUSTOMERS: Spec[] = [
  {
    key: 'shop',
    role: 'end-customer',
    organization: 'Shop Demo UG',
    contact: { name: 'Sam Shop', email: 'sam@shop-demo.example', phone: '+49 30 5550101' },
    domain: 'shop-demo.example',
  },
  {
    key: 'blog',
    role: 'end-customer',
    organization: 'Blog Demo e.K.',
    contact: { name: 'Bea Blog', email: 'bea@blog-demo.example', phone: '+49 30 5550102' },
    domain: 'blog-demo.example',
  },
];
const INDEPENDENT: Spec = {
  key: 'solo',
  role: 'customer',
  organization: 'Solo Demo AG',
  contact: { name: 'Sol Solo', email: 'sol@solo-demo.example', phone: '+49 30 5550103' },
  domain: 'solo-demo.example',
};

/**
 * Loads the dataset through the operator services (the same rules as `hostplane admin …`).
 * The caller checks that the database is new:
 * `loadDemoData(admin, config.publicBaseUrl, { mariadbUrl: config.demoMariadbUrl, db: store.db })`.
 * With a MariaDB/MySQL at `mariadbUrl`, the customers can create databases there at once.
 */
export async function loadDemoData(admin: Admin, baseUrl: string, o: DemoOptions = {}): Promise<DemoLoad> {
  const warnings: string[] = [];
  let databaseServer: DatabaseServerView | null = null;
  if (o.mariadbUrl && o.db) {
    try {
      const added = await new DatabaseServersService(o.db).addAsItIs({ name: DEMO_DATABASE_SERVER, url: o.mariadbUrl, isDefault: true });
      databaseServer = added.server;
      warnings.push(...added.warnings);
    } catch (e) {
      warnings.push(`DEMO_MARIADB_URL: ${(e as Error).message} The demo has no database server; add one with \`hostplane admin database-server add\`.`);
    }
  }
  // A store whose nodes registered a database server already: the plans offer what it runs.
  if (!databaseServer && o.db) databaseServer = (await new DatabaseServersService(o.db).list()).find((s) => s.default) ?? null;
  const databaseVersions = planVersions(databaseServer);
  const operatorPlan = (await admin.packages.createPlan({ name: 'Webhosting M', maxDatabases: 10, maxEmailAddresses: 100, maxSubdomains: 50, databaseVersions, phpVersions: DEMO_PHP_VERSIONS })).planId;

  const create = async (spec: Spec, planId: number, resellerId: number | null): Promise<DemoCustomer & { customerId: number }> => {
    const { customerId, contactId } = await admin.customers.createCustomer({
      organization: spec.organization,
      reseller: spec.role === 'reseller',
      resellerId,
      contact: spec.contact,
    });
    const { packageId } = await admin.packages.createPackage({ customerId, planId, name: spec.domain, linuxUser: `demo_${spec.key}` });
    const { domain } = await admin.domains.createDomain({ name: spec.domain, customerId, packageId, registered: true });
    const { token } = await admin.customers.issueToken(contactId, 'demo');
    return {
      customerId,
      id: String(customerId),
      role: spec.role,
      reseller_id: resellerId === null ? null : String(resellerId),
      token,
      package_id: String(packageId),
      domain,
      legacy_password: null,
    };
  };

  const reseller = await create(RESELLER, operatorPlan, null);
  reseller.legacy_password = await admin.customers.setGeneratedLegacyPassword(reseller.customerId);
  // The reseller sells its own plan to its end customers.
  const resellerPlan = (
    await admin.packages.createPlan({ name: 'Reseller Starter', resellerId: reseller.customerId, maxDatabases: 2, maxEmailAddresses: 20, maxSubdomains: 10, databaseVersions, phpVersions: DEMO_PHP_VERSIONS })
  ).planId;
  const ends = [];
  for (const spec of END_CUSTOMERS) ends.push(await create(spec, resellerPlan, reseller.customerId));
  const solo = await create(INDEPENDENT, operatorPlan, null);

  const wire = ({ id, role, reseller_id, token, package_id, domain, legacy_password }: DemoCustomer): DemoCustomer => ({
    id, role, reseller_id, token, package_id, domain, legacy_password,
  });
  return { data: { base_url: baseUrl, customers: [reseller, ...ends, solo].map(wire) }, databaseServer, warnings };
}
