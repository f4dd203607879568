// The original service's /getDomainStatus, switched off on 2026-08-01: every request to it answers
// 410 with an error that names /domain-availability as its replacement — with or without
// credentials (legacy clients send the reseller's legacy password), for any method and below it.
import { describe, expect, it } from 'vitest';
import { BASE, ENGINES, call } from '../../helpers/app.js';
import { basic } from '../../helpers/auth.js';
import { LEGACY_PASSWORD, useAvailability } from '../../helpers/domain-availability.js';

const GONE = {
  id: 'gone',
  status: '410',
  title: 'Endpoint switched off',
  detail:
    '/getDomainStatus was switched off on 2026-08-01. Use GET /domain-availability/{names} instead: ' +
    "up to 10 comma-separated domain names, with an API token or the reseller's legacy password.",
};

describe.each(ENGINES)('/getDomainStatus on %s', (engine) => {
  const { t, x } = useAvailability(engine);

  it('GET without credentials → 410 gone naming /domain-availability', async () => {
    const r = await call(t.app, 'GET', '/getDomainStatus?domain=shop.example');
    expect(r.status).toBe(410);
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.body).toBe(JSON.stringify({ errors: [GONE], links: { self: `${BASE}/getDomainStatus?domain=shop.example` } }));
  });

  it.each([
    ['GET', '/getDomainStatus', { authorization: 'LEGACY' }],
    ['GET', '/getDomainStatus/shop.example', { accept: 'application/vnd.api+json' }],
    ['POST', '/getDomainStatus', { authorization: 'TOKEN' }],
    ['GET', '//getDomainStatus/', {}],
  ])('%s %s with %j → 410 as well', async (method, url, given) => {
    const headers: Record<string, string> = { ...given };
    if (headers.authorization === 'LEGACY') headers.authorization = basic(x.reseller.customerId, LEGACY_PASSWORD);
    if (headers.authorization === 'TOKEN') headers.authorization = `token ${x.reseller.token}`;
    const r = await call(t.app, method as 'GET' | 'POST', url, { headers });
    expect(r.status).toBe(410);
    expect(r.headers['content-type']).toBe(headers.accept ?? 'application/json');
    expect(r.json).toEqual({ errors: [GONE], links: { self: `${BASE}${url}` } });
  });

  it('a path that only starts alike is an unknown path (404)', async () => {
    const r = await call(t.app, 'GET', '/getDomainStatusX');
    expect(r.status).toBe(404);
    expect(r.json.errors[0].id).toBe('resource_not_found');
  });
});
