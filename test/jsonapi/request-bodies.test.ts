// Request bodies against PATCH /customers/{id} (API guide "Versioning and content types",
// "Compatibility with existing clients", "Errors"): content types (415), malformed JSON (400),
// BODY_LIMIT_BYTES (413), bodies that are not objects (422).
import { describe, expect, it } from 'vitest';
import { ENGINES, call } from '../helpers/app.js';
import { JSON_CT, VND, errorDoc, patchBody, useHttpCore } from '../helpers/http-core.js';

const UNSUPPORTED = {
  id: 'unsupported_media_type',
  status: '415',
  title: 'Unsupported media type',
  detail: 'Send request bodies as application/json or application/vnd.api+json.',
};

describe.each(ENGINES)('HTTP core on %s', (engine) => {
  const { t, x, resellerList } = useHttpCore(engine);

  describe('request bodies (API guide "Versioning and content types", "Compatibility with existing clients", "Errors")', () => {
    it.each(['text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'application/jsonx', 'application/vnd.hostplane.v1+json'])(
      'PATCH with Content-Type %s → 415 unsupported_media_type, nothing changed',
      async (ct) => {
        const id = x.end1.customerId;
        const r = await call(t.app, 'PATCH', `/customers/${id}`, {
          token: x.reseller.token,
          body: patchBody(id, { external_customer_id: 'via-415' }),
          headers: { 'content-type': ct },
        });
        expect(r.status).toBe(415);
        expect(r.json).toEqual(errorDoc(`/customers/${id}`, UNSUPPORTED));
        const after = await call(t.app, 'GET', `/customers/${id}`, { token: x.end1.token });
        expect(after.json.data.attributes.external_customer_id).toBe(null);
      },
    );

    it('PATCH with a body and no Content-Type → 415', async () => {
      const id = x.end1.customerId;
      const res = await t.app.inject({
        method: 'PATCH',
        url: `/customers/${id}`,
        headers: { authorization: `token ${x.reseller.token}` },
        payload: patchBody(id),
      });
      expect(res.statusCode).toBe(415);
      expect(res.headers['content-type']).toBe(JSON_CT);
      expect(JSON.parse(res.body)).toEqual(errorDoc(`/customers/${id}`, UNSUPPORTED));
    });

    it('POST on /customers (no POST route) → 405 whatever the Content-Type, never 415', async () => {
      for (const ct of [undefined, 'text/plain', VND]) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/customers',
          headers: { authorization: `token ${x.reseller.token}`, ...(ct ? { 'content-type': ct } : {}) },
          payload: '{"data":{}}',
        });
        expect(res.statusCode).toBe(405);
        expect(res.headers.allow).toBe('GET');
      }
    });

    it('malformed JSON → 400 bad_request', async () => {
      const id = x.end1.customerId;
      for (const body of ['{bad', '{"data":', '{"data":{}}x']) {
        const r = await call(t.app, 'PATCH', `/customers/${id}`, { token: x.reseller.token, body });
        expect(r.status).toBe(400);
        expect(r.headers['content-type']).toBe(VND);
        expect(r.json).toEqual(
          errorDoc(`/customers/${id}`, { id: 'bad_request', status: '400', title: 'Bad request', detail: expect.stringMatching(/^Malformed JSON: /) }),
        );
      }
    });

    it('a body over BODY_LIMIT_BYTES → 413 payload_too_large', async () => {
      const id = x.end1.customerId;
      const body = patchBody(id, { external_customer_id: 'x'.repeat(3000) });
      const r = await call(t.app, 'PATCH', `/customers/${id}`, { token: x.reseller.token, body });
      expect(r.status).toBe(413);
      expect(r.json).toEqual(
        errorDoc(`/customers/${id}`, { id: 'payload_too_large', status: '413', title: 'Payload too large', detail: 'The request body is too large.' }),
      );
    });

    it.each(['[]', 'null', '"x"', '1', 'true', ''])('a JSON body that is not an object (%j) → 422 invalid_api_data, not 500', async (body) => {
      const id = x.end1.customerId;
      const r = await call(t.app, 'PATCH', `/customers/${id}`, { token: x.reseller.token, body, headers: { 'content-type': VND } });
      expect(r.status).toBe(422);
      expect(r.json).toEqual(
        errorDoc(`/customers/${id}`, { id: 'invalid_api_data', status: '422', title: 'Invalid data', detail: 'Must be object.', source: { pointer: '/' } }),
      );
    });

    it('a "__proto__" attribute is an unknown attribute (422), not a prototype change', async () => {
      const id = x.end1.customerId;
      const body = `{"data":{"type":"customer","id":"${id}","attributes":{"__proto__":{"is_login_disabled":true}}}}`;
      const r = await call(t.app, 'PATCH', `/customers/${id}`, { token: x.reseller.token, body });
      expect(r.status).toBe(422);
      expect(r.json).toEqual(
        errorDoc(`/customers/${id}`, {
          id: 'invalid_api_data',
          status: '422',
          title: 'Invalid data',
          detail: 'Unknown or read-only attribute "__proto__".',
          source: { pointer: '/data/attributes/__proto__' },
        }),
      );
    });

    it('a body with a hundred unknown attributes → 422 naming the first 20, nothing changed', async () => {
      const id = x.end1.customerId;
      const names = Array.from({ length: 100 }, (_, i) => `k${i}`);
      const body = patchBody(id, Object.fromEntries(names.map((n) => [n, 1])));
      const r = await call(t.app, 'PATCH', `/customers/${id}`, { token: x.reseller.token, body });
      expect(r.status).toBe(422);
      expect(r.json).toEqual({
        errors: names.slice(0, 20).map((n) => ({
          id: 'invalid_api_data',
          status: '422',
          title: 'Invalid data',
          detail: `Unknown or read-only attribute "${n}".`,
          source: { pointer: `/data/attributes/${n}` },
        })),
        links: errorDoc(`/customers/${id}`, {}).links,
      });
    });

    it('GET and DELETE with Content-Type application/vnd.api+json and an empty body are accepted (API guide "Compatibility with existing clients")', async () => {
      const get = await call(t.app, 'GET', '/customers', { token: x.reseller.token, headers: { 'content-type': VND }, body: '' });
      expect(get.status).toBe(200);
      expect(get.json).toEqual(resellerList);
      // /customers/{id} has no DELETE: the answer is the 405 of the path, not a body error.
      const del = await call(t.app, 'DELETE', `/customers/${x.end1.customerId}`, { token: x.reseller.token, headers: { 'content-type': VND }, body: '' });
      expect(del.status).toBe(405);
      expect(del.headers.allow).toBe('GET, PATCH');
      expect(del.json).toEqual(
        errorDoc(`/customers/${x.end1.customerId}`, { id: 'method_not_allowed', status: '405', title: 'Method not allowed', detail: 'Use GET, PATCH on this path.' }),
      );
    });
  });
});
