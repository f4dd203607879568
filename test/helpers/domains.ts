// The domains fixture (API guide "Domains"): the standard tenants plus three domains of end1 — an
// IDN used with its package, a registration-only domain, and flags.example for the PATCH tests.
import { beforeAll } from 'vitest';
import { BASE, call, type EngineName } from './app.js';
import { errorBody, type ErrorSourceShape } from './errors.js';
import { useSeededApp } from './suite.js';

/**
 * Registers the hooks that build the fixture for the surrounding describe and returns its parts:
 * `const { t, x, get } = useDomains(engine); … (await get('end1.example')).json`.
 */
export function useDomains(engine: EngineName) {
  const { t, x } = useSeededApp(engine);
  beforeAll(async () => {
    const end1 = Number(x.end1.customerId);
    // Registered elsewhere, used with end1's package (presence only); an IDN.
    await t.admin.domains.createDomain({ name: 'Bücher.example', customerId: end1, packageId: Number(x.end1.packageId) });
    // Registered with the service, not used with a package (registration only).
    await t.admin.domains.createDomain({ name: 'registered-only.example', customerId: end1, registered: true, expiresAt: '2031-01-02T03:04:05.000Z' });
    // For PATCH tests, so the other tests see unchanged flags.
    await t.admin.domains.createDomain({ name: 'flags.example', customerId: end1, packageId: Number(x.end1.packageId) });
  });

  return {
    t,
    x,
    /** The stored row of a domain, for the timestamps a test cannot know. */
    row: async (name: string) => (await t.admin.repo.domains()).find((d) => d.name === name)!,
    get: (name: string, token = x.end1.token) => call(t.app, 'GET', `/domains/${encodeURIComponent(name)}`, { token }),
    patch: (name: string, data: unknown, token = x.end1.token) => call(t.app, 'PATCH', `/domains/${encodeURIComponent(name)}`, { token, body: { data } }),
  };
}

/** One error for a request to `url` (relative): `errorAt('/domains/x', 'resource_not_found', 404, 'Resource not found', 'No such domain.')`. */
export const errorAt = (url: string, id: string, status: number, title: string, detail: string, source?: ErrorSourceShape) =>
  errorBody(id, status, title, detail, BASE + url, source);
