// What the subdomains and databases pages share: one package with its plan (API guide "Packages",
// "Plans").
import { api, type Resource } from '../api/client';

export interface PackageAttributes {
  name: string;
  linux_user: string;
}
export interface PlanAttributes {
  name: string;
  php_versions: string[];
  database_versions: string[];
  max_subdomains: number;
  max_databases: number;
}

export interface PackageWithPlan {
  pkg: Resource<PackageAttributes>;
  plan: Resource<PlanAttributes> | null;
}

/** The package and its plan; a package the user may not see rejects with the API's 404. */
export async function loadPackage(packageId: string): Promise<PackageWithPlan> {
  const { data: pkg } = await api<Resource<PackageAttributes>>('GET', `/packages/${encodeURIComponent(packageId)}`);
  const planId = pkg.relationships?.plan?.data?.id;
  const plan = planId ? (await api<Resource<PlanAttributes>>('GET', `/plans/${encodeURIComponent(planId)}`).catch(() => null))?.data ?? null : null;
  return { pkg, plan };
}
