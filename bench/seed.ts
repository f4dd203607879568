// Bench fixture: the shape of the demo dataset (one reseller with two end customers, one
// independent customer; each with a plan, a package, a presence domain and a token), created
// through the operator actions so the rows are exactly what production code writes.
import { AdminRepository } from '../src/admin/admin.repository.js';
import { AdminService } from '../src/admin/admin.service.js';
import type { Store } from '../src/db/index.js';

export interface BenchTenant {
  customerId: string;
  token: string;
  domain: string;
}

export interface BenchData {
  reseller: BenchTenant;
  end1: BenchTenant;
  end2: BenchTenant;
  solo: BenchTenant;
}

async function tenant(admin: AdminService, key: string, opts: { reseller?: boolean; resellerId?: number; planId?: number }): Promise<BenchTenant> {
  const { customerId, contactId } = await admin.createCustomer({
    organization: `${key} GmbH`,
    reseller: opts.reseller,
    resellerId: opts.resellerId ?? null,
    contact: { name: `${key} Admin`, email: `admin@${key}.example`, phone: '+49 30 1234567' },
  });
  const planId = opts.planId ?? (await admin.createPlan({ name: `${key} plan` })).planId;
  const { packageId } = await admin.createPackage({ customerId, planId, name: `${key} package`, linuxUser: `u_${key}` });
  const { domain } = await admin.createDomain({ name: `${key}.example`, customerId, packageId, registered: true });
  const { token } = await admin.issueToken(contactId, 'bench');
  return { customerId: String(customerId), token, domain };
}

/** Seeds a migrated, empty store. */
export async function seedBench(store: Store): Promise<BenchData> {
  const admin = new AdminService(new AdminRepository(store.db));
  const reseller = await tenant(admin, 'reseller', { reseller: true });
  const { planId } = await admin.createPlan({ name: 'reseller sells this', resellerId: Number(reseller.customerId) });
  const end1 = await tenant(admin, 'end1', { resellerId: Number(reseller.customerId), planId });
  const end2 = await tenant(admin, 'end2', { resellerId: Number(reseller.customerId), planId });
  const solo = await tenant(admin, 'solo', {});
  return { reseller, end1, end2, solo };
}
