// Errors raised by the router before any hook runs still answer as JSON:API error documents
// (API guide "Compatibility with existing clients"): no Fastify-shaped bodies reach a client.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, call, createTestApp, type TestApp } from '../helpers/app.js';

describe('router-level errors', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp('sqlite');
  });
  afterAll(() => t.close());

  it('a path segment longer than the router allows → 414 uri_too_long', async () => {
    const url = `/domains/${'a'.repeat(3000)}.example`;
    const r = await call(t.app, 'GET', url);
    expect(r.status).toBe(414);
    expect(r.json).toEqual({
      errors: [{ id: 'uri_too_long', status: '414', title: 'URI too long', detail: 'A path segment is too long.' }],
      links: { self: `${BASE}${url}` },
    });
  });

  it.each(['/domains/%E0%A4%A', '/customers/%zz'])('malformed percent-encoding %s → 400 bad_request', async (url) => {
    const r = await call(t.app, 'GET', url);
    expect(r.status).toBe(400);
    expect(r.json).toEqual({
      errors: [{ id: 'bad_request', status: '400', title: 'Bad request', detail: 'The URL is malformed.' }],
      links: { self: `${BASE}${url}` },
    });
  });
});

describe('router-level errors share the client budget (docs/decisions/0002)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp('sqlite', { RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW_S: '10' });
  });
  afterAll(() => t.close());

  it('malformed URLs spend the budget and are refused with 429 rate_limited once it is spent', async () => {
    const first = await call(t.app, 'GET', '/customers/%zz');
    expect([first.status, first.headers['ratelimit-remaining']]).toEqual([400, '1']);
    const second = await call(t.app, 'GET', '/customers/%zz');
    expect([second.status, second.headers['ratelimit-remaining']]).toEqual([400, '0']);
    const third = await call(t.app, 'GET', '/customers/%zz');
    expect(third.status).toBe(429);
    expect(third.headers['retry-after']).toBe('10');
    expect(third.json).toEqual({
      errors: [{ id: 'rate_limited', status: '429', title: 'Too many requests', detail: 'At most 2 requests per window are allowed.' }],
      links: { self: `${BASE}/customers/%zz` },
    });
  });
});
