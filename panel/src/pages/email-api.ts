// The requests of the e-mail pages (API guide "E-mail addresses"), each one the guide documents:
// the addresses of a customer's packages, one address, its changes, forward targets and
// application passwords. The API checks every rule; errors come back as ApiErrors.
import { api, list, type Resource } from '../api/client';

export const ANTISPAM_MODES = ['reject', 'junk-folder', 'subject-rewrite', 'none'] as const;
export type AutoresponderKey = 'text' | 'active' | 'activates' | 'expires';

export interface Autoresponder {
  text: string;
  active: boolean;
  activates: string | null;
  expires: string | null;
}

// A type, not an interface: assignable to Resource's Record<string, unknown> (jobIdOf).
export type EmailAttributes = {
  address: string;
  address_ace: string;
  address_type: 'mailbox' | 'forward';
  description: string | null;
  antispam: string;
  forward_to: string[];
  autoresponder: Autoresponder | null;
  quota: { limit_bytes: number; used_bytes: number | null; updated_at: string | null } | null;
  created_at: string;
  /** Only in the answers that generated one: shown once. */
  password?: string;
};
export type EmailAddress = Resource<EmailAttributes>;

export interface AppPasswordAttributes {
  device: string;
  application: string;
  created_at: string;
  last_used_at?: string | null;
  /** Only in the 201 of its creation. */
  password?: string;
}

const path = (id: string, ...rest: string[]) => ['/email-addresses', id, ...rest].map((p, i) => (i === 0 ? p : encodeURIComponent(p))).join('/');

/**
 * What the list page shows for one customer: its packages, their addresses, and the domains
 * (presence domains and their subdomains) an address can be created at. `filter[package_id]`
 * keeps a reseller's own and its other customers' addresses out.
 */
export async function loadMailOverview(customerId: string) {
  const packages = await list<{ name: string }>('/packages', { 'filter[owner_id]': customerId });
  if (!packages.length) return { packages, addresses: [] as EmailAddress[], domains: [] as string[] };
  const ids = packages.map((p) => p.id).join(',');
  const [addresses, domains, subdomains] = await Promise.all([
    list<EmailAttributes>('/email-addresses', { 'filter[package_id]': ids }),
    list<{ name: string; presence: unknown }>('/domains', { 'filter[owner_id]': customerId }),
    list<{ fqdn: string }>('/subdomains', { 'filter[package_id]': ids }),
  ]);
  const names = [...domains.filter((d) => d.attributes.presence).map((d) => d.attributes.name), ...subdomains.map((s) => s.attributes.fqdn)];
  return { packages, addresses, domains: names };
}

export const getAddress = async (id: string) => (await api<EmailAddress>('GET', path(id))).data;

export async function createAddress(attributes: Record<string, unknown>) {
  return (await api<EmailAddress>('POST', '/email-addresses', { body: { data: { type: 'email-address', attributes } } })).data;
}

export async function patchAddress(id: string, attributes: Record<string, unknown>) {
  return (await api<EmailAddress>('PATCH', path(id), { body: { data: { type: 'email-address', id, attributes } } })).data;
}

export const deleteAddress = async (id: string) => (await api<Resource>('DELETE', path(id))).data;
export const newGeneratedPassword = async (id: string) => (await api<EmailAddress>('POST', path(id, 'password'))).data;
export const addTarget = (id: string, target: string) => api('POST', path(id, 'forward-to', target));
export const removeTarget = (id: string, target: string) => api('DELETE', path(id, 'forward-to', target));

export const appPasswords = (id: string) => list<AppPasswordAttributes>(path(id, 'application-passwords'));
export async function createAppPassword(id: string, attributes: { device: string; application: string }) {
  return (await api<Resource<AppPasswordAttributes>>('POST', path(id, 'application-passwords'), { body: { data: { type: 'application-password', attributes } } })).data;
}
export const deleteAppPassword = (id: string, appId: string) => api('DELETE', path(id, 'application-passwords', appId));
