// The standard fixture: one reseller with two end customers, one independent customer, each with a
// plan, a package, a presence domain and a token (the shape of the demo dataset).
import type { Admin } from '../../src/admin/index.js';

export interface Tenant {
  customerId: string;
  contactId: number;
  token: string;
  planId: string;
  packageId: string;
  domain: string;
}

export interface Tenants {
  reseller: Tenant;
  end1: Tenant;
  end2: Tenant;
  solo: Tenant;
  resellerPlanId: string;
}

async function tenant(admin: Admin, key: string, opts: { reseller?: boolean; resellerId?: number; planId?: number }): Promise<Tenant> {
  const { customerId, contactId } = await admin.customers.createCustomer({
    organization: `${key} GmbH`,
    reseller: opts.reseller,
    resellerId: opts.resellerId ?? null,
    contact: { name: `${key} Admin`, email: `admin@${key}.example`, phone: '+49 30 1234567' },
  });
  const planId = opts.planId ?? (await admin.packages.createPlan({ name: `${key} plan` })).planId;
  const { packageId } = await admin.packages.createPackage({ customerId, planId, name: `${key} package`, linuxUser: `u_${key}` });
  const { domain } = await admin.domains.createDomain({ name: `${key}.example`, customerId, packageId, registered: true });
  const { token } = await admin.customers.issueToken(contactId, 'test');
  return { customerId: String(customerId), contactId, token, planId: String(planId), packageId: String(packageId), domain };
}

export async function seedTenants(admin: Admin): Promise<Tenants> {
  const reseller = await tenant(admin, 'reseller', { reseller: true });
  const { planId: resellerPlanId } = await admin.packages.createPlan({ name: 'reseller sells this', resellerId: Number(reseller.customerId) });
  const end1 = await tenant(admin, 'end1', { resellerId: Number(reseller.customerId), planId: resellerPlanId });
  const end2 = await tenant(admin, 'end2', { resellerId: Number(reseller.customerId), planId: resellerPlanId });
  const solo = await tenant(admin, 'solo', {});
  return { reseller, end1, end2, solo, resellerPlanId: String(resellerPlanId) };
}
