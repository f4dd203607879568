// Errors raised by the router before any hook runs still answer as JSON:API error documents
// (API-NOTES §1.12): no Fastify-shaped bodies reach a client.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, call, createTestApp, type TestApp } from './helpers/app.js';

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
