// Fuzzed request bodies (fast-check) against the write endpoints of several
// resources, on both engines: bodies nested far deeper than any document, bodies that are
// malformed, odd or hostile. Every one answers a 4xx JSON:API error document, never a 5xx, and
// nothing changes. Beyond MAX_BODY_DEPTH levels the answer is the depth error, whatever else is wrong.
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { ERRORS, type ErrorCode } from '../../src/errors.js';
import { MAX_BODY_DEPTH } from '../../src/jsonapi/json-body.js';
import { BASE, ENGINES, call } from '../helpers/app.js';
import { useSeededApp } from '../helpers/suite.js';
import type { Tenants } from '../helpers/tenants.js';
import { JSON_CT, VND } from '../helpers/http-core.js';

const TOO_DEEP = `The JSON body is nested too deeply: at most ${MAX_BODY_DEPTH} levels of arrays and objects are allowed.`;

interface Endpoint {
  name: string;
  method: 'PATCH' | 'POST';
  url: string;
  token: string;
  /** A body this endpoint would accept; the fuzz puts its nesting into it. */
  valid: Record<string, unknown>;
  /** Where, inside `valid`, nesting may be put (a path of keys; [] is the whole body). */
  holes: string[][];
}

function endpoints(x: Tenants): Endpoint[] {
  return [
    {
      name: 'PATCH /customers/{id}',
      method: 'PATCH',
      url: `/customers/${x.end1.customerId}`,
      token: x.reseller.token,
      valid: { data: { type: 'customer', id: x.end1.customerId, attributes: { external_customer_id: 'fuzz-1' } } },
      holes: [[], ['data'], ['data', 'attributes'], ['data', 'attributes', 'external_customer_id'], ['data', 'id']],
    },
    {
      name: 'PATCH /domains/{name}',
      method: 'PATCH',
      url: `/domains/${x.end1.domain}`,
      token: x.end1.token,
      valid: { data: { type: 'domain', id: x.end1.domain, attributes: { presence: { dns_update_lock: true } } } },
      holes: [[], ['data', 'attributes', 'presence'], ['data', 'attributes', 'presence', 'dns_update_lock']],
    },
    {
      name: 'POST /dns-records',
      method: 'POST',
      url: '/dns-records',
      token: x.end1.token,
      valid: { data: { type: 'dns-record', attributes: { record_type: 'TXT', name: 'fuzz', domain: x.end1.domain, data: 'v=1', ttl: 3600 } } },
      holes: [[], ['data'], ['data', 'attributes', 'data'], ['data', 'attributes', 'ttl']],
    },
  ];
}

const HOLE = '\uE000hole';

/** `valid` as JSON text with `nested` in place of the value at `path`, and the depth of that place. */
function withHole(valid: Record<string, unknown>, path: string[], nested: string): { text: string; depth: number } {
  if (path.length === 0) return { text: nested, depth: 0 };
  const copy = structuredClone(valid);
  let at: Record<string, unknown> = copy;
  for (const key of path.slice(0, -1)) at = at[key] as Record<string, unknown>;
  at[path[path.length - 1]] = HOLE;
  return { text: JSON.stringify(copy).replace(JSON.stringify(HOLE), nested), depth: path.length };
}

/** Nesting `levels` deep, each level an array or an object as `shape` says, around `leaf`. */
function nest(levels: number, shape: 'array' | 'object' | 'mixed', leaf: string, closed: boolean): string {
  const open: string[] = [];
  const close: string[] = [];
  for (let i = 0; i < levels; i++) {
    const array = shape === 'array' || (shape === 'mixed' && i % 2 === 0);
    open.push(array ? '[' : '{"k":');
    close.push(array ? ']' : '}');
  }
  return open.join('') + leaf + (closed ? close.reverse().join('') : '');
}

const leaf = fc.oneof(
  fc.constantFrom('"x"', '"\\u0000"', '1', 'null', '{}', '[]', '"\\ud800"', '1e999', '-0', '"\\"]]]}}}"'),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
);

/** Bodies that are wrong in other ways than depth: malformed, odd values, hostile keys, bytes. */
const oddBody = fc.oneof(
  fc.jsonValue({ maxDepth: 6 }).map((v) => JSON.stringify(v)),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.constantFrom(
    '{',
    '"',
    '"\\',
    '{"data":{"type":"customer"',
    '\uFEFF{"data":{}}',
    '{"data":null}',
    '{"data":[]}',
    '{"data":{"attributes":{"__proto__":{"x":1}}}}',
    '{"constructor":{"prototype":{"x":1}}}',
    '{"data":{},"data":{}}',
    '{"data":{"type":"\\u0000"}}',
    '{"\\u0000":1}',
    '{"a":"\u0000"}',
    '[1e999999]',
    '{"data":{"attributes":{"ttl":1e400}}}',
    '{"data":{"attributes":{"ttl":-0}}}',
    '\\u0000',
    ']]]]',
    '}}}}{{{{',
    '[' + '"\\\\u0000",'.repeat(50) + '1]',
  ),
  fc.string({ maxLength: 40 }).map((s) => `{"data":{"type":${JSON.stringify(s)},"attributes":{}}}`),
);

/** Asserts that `r` is a 4xx JSON:API error document about `url`, in the content type the request named. */
function expectClientErrorDocument(r: Awaited<ReturnType<typeof call>>, url: string, contentType: string) {
  expect(r.status, r.body).toBeGreaterThanOrEqual(400);
  expect(r.status, r.body).toBeLessThan(500);
  expect(r.headers['content-type']).toBe(contentType);
  expect(Object.keys(r.json)).toEqual(['errors', 'links']);
  expect(r.json.links).toEqual({ self: `${BASE}${url}` });
  expect(r.json.errors.length).toBeGreaterThan(0);
  for (const e of r.json.errors) {
    const id = e.id as ErrorCode;
    expect(ERRORS[id], `error id ${e.id}`).toBeDefined();
    expect(e).toEqual({
      id,
      status: String(r.status),
      title: ERRORS[id].title,
      ...(e.detail !== undefined ? { detail: expect.any(String) } : {}),
      ...(e.source !== undefined ? { source: expect.any(Object) } : {}),
    });
  }
}

describe.each(ENGINES)('fuzzed request bodies on %s', (engine) => {
  const { t, x } = useSeededApp(engine);
  let targets: Endpoint[];
  /** What a client sees of every resource the endpoints write, before any fuzzed request. */
  let before: unknown[];
  const snapshot = () =>
    Promise.all([
      call(t.app, 'GET', `/customers/${x.end1.customerId}`, { token: x.reseller.token }).then((r) => r.json),
      call(t.app, 'GET', `/domains/${x.end1.domain}`, { token: x.end1.token }).then((r) => r.json),
      call(t.app, 'GET', `/dns-records?filter[domain]=${x.end1.domain}`, { token: x.end1.token }).then((r) => r.json),
      call(t.app, 'GET', '/queue-jobs', { token: x.end1.token }).then((r) => r.json),
    ]);
  beforeAll(async () => {
    targets = endpoints(x);
    before = await snapshot();
  });
  const send = (e: Endpoint, body: string, contentType: string) =>
    call(t.app, e.method, e.url, { token: e.token, body, headers: { 'content-type': contentType, accept: contentType } });

  it.each([
    [10_000, 'array'],
    [10_000, 'object'],
    [400_000, 'array'], // 800 kB, under the 1 MB body limit
  ] as const)('a body nested %i levels deep (%s) → 400 bad_request on every write endpoint, at the root or inside', async (levels, shape) => {
    for (const e of targets) {
      for (const path of [[], e.holes[e.holes.length - 1]]) {
        const r = await send(e, withHole(e.valid, path, nest(levels, shape, '"\\u0000"', true)).text, VND);
        expect(r.status, e.name).toBe(400);
        expect(r.json, e.name).toEqual({ errors: [{ id: 'bad_request', status: '400', title: 'Bad request', detail: TOO_DEEP }], links: { self: `${BASE}${e.url}` } });
      }
    }
  });

  it(`exactly ${MAX_BODY_DEPTH} levels are parsed (and judged by the schema); one more is refused`, async () => {
    const e = targets[0]; // external_customer_id sits at level 3: {"data":{"attributes":{"external_customer_id":…
    const at = (levels: number) => withHole(e.valid, ['data', 'attributes', 'external_customer_id'], nest(levels, 'array', '"x"', true)).text;
    const deepest = await send(e, at(MAX_BODY_DEPTH - 3), VND);
    expect(deepest.status).toBe(422);
    // The schema's own wording is not this test's subject.
    expect(deepest.json.errors).toEqual([
      { id: 'invalid_api_data', status: '422', title: 'Invalid data', detail: expect.any(String), source: { pointer: '/data/attributes/external_customer_id' } },
    ]);
    const over = await send(e, at(MAX_BODY_DEPTH - 2), VND);
    expect(over.status).toBe(400);
    expect(over.json.errors).toEqual([{ id: 'bad_request', status: '400', title: 'Bad request', detail: TOO_DEEP }]);
  });

  it('deeply nested bodies anywhere in a document: a 4xx error document, the depth error beyond the bound', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.nat(),
        fc.nat(),
        fc.oneof(fc.integer({ min: 1, max: MAX_BODY_DEPTH + 4 }), fc.integer({ min: 100, max: 20_000 })),
        fc.constantFrom('array', 'object', 'mixed') as fc.Arbitrary<'array' | 'object' | 'mixed'>,
        leaf,
        fc.boolean(),
        fc.constantFrom(VND, JSON_CT),
        async (which, hole, levels, shape, inner, closed, ct) => {
          const e = targets[which % targets.length];
          const path = e.holes[hole % e.holes.length];
          const { text, depth } = withHole(e.valid, path, nest(levels, shape, inner, closed));
          const r = await send(e, text, ct);
          expectClientErrorDocument(r, e.url, ct);
          // Within the bound the answer depends on the rest (schema, NUL, syntax, levels the leaf adds).
          if (depth + levels > MAX_BODY_DEPTH) expect(r.json.errors).toEqual([{ id: 'bad_request', status: '400', title: 'Bad request', detail: TOO_DEEP }]);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('malformed, odd and hostile bodies: a 4xx error document', async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat(), oddBody, fc.constantFrom(VND, JSON_CT), async (which, body, ct) => {
        const e = targets[which % targets.length];
        expectClientErrorDocument(await send(e, body, ct), e.url, ct);
      }),
      { numRuns: 150 },
    );
  });

  it('after all of them, nothing a client can see has changed', async () => {
    expect(await snapshot()).toEqual(before);
  });
});
