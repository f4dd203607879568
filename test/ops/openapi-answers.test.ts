// The answers the API really sends — successes and failures — judged by Redocly's example validator
// against the schemas the OpenAPI document (docs/decisions/0006-openapi.md) documents for their
// operation, status and type.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, ENGINES, call, createTestApp, type EngineName, type TestApp } from '../helpers/app.js';
import { filledLater } from '../helpers/suite.js';
import { placeholderServers } from '../helpers/placeholder-servers.js';
import { loadDemoData } from '../../src/admin/demo.js';
import { EXAMPLE_LOGIN } from '../../src/resources/session/session.schema.js';
import { codeAt, cookieOf } from '../helpers/panel.js';
import { codeBody, VND, OPERATION_IDS, isPanel, type Operation, operations, successStatus, hasPathParams, readsBody, lint } from '../helpers/openapi.js';

/** One exchange with the API: which operation, what was tried, and the answer. */
interface Sample {
  o: Operation;
  what: string;
  status: number;
  type: string;
  body: unknown;
}

/** The request an operation's examples describe: the URL with its path parameters' examples, the body example. */
function exampleRequest(o: Operation) {
  const url = o.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const param = (o.op.parameters ?? []).find((p: any) => p.in === 'path' && p.name === name);
    if (param?.example === undefined) throw new Error(`${o.key}: no example for {${name}}`);
    return encodeURIComponent(param.example);
  });
  const body = o.op.requestBody?.content['application/vnd.api+json'].example;
  if (o.op.requestBody && body === undefined) throw new Error(`${o.key}: no request body example`);
  return { url, body };
}

/** The URL of `o` with every path parameter set to `value` (raw: it may be malformed on purpose). */
const urlWith = (o: Operation, value: string) => o.path.replace(/\{\w+\}/g, value);

/**
 * The URL of `o` naming an object that does not exist: its first path parameter `nonexistent.example`,
 * the others their examples (a forwarding target must still be an address, else the answer is 422).
 */
function unknownObjectUrl(o: Operation) {
  const [first] = o.path.match(/\{\w+\}/) ?? [''];
  return exampleRequest({ ...o, path: o.path.replace(first, 'nonexistent.example') }).url;
}

/** Problems of the samples against the schema documented for their operation, status and type (Redocly's example validator). */
async function schemaProblems(doc: any, samples: Sample[]) {
  const copy = structuredClone(doc);
  const undocumented: string[] = [];
  samples.forEach((s, i) => {
    // A 204 has no body to judge (the test checks that it is empty).
    if (s.status === 204) return;
    const media = copy.paths[s.o.path][s.o.method.toLowerCase()].responses[s.status]?.content?.[s.type];
    if (!media) return undocumented.push(`${s.o.key} ${s.what}: ${s.status} ${s.type} is not documented`);
    media.examples = { ...media.examples, [`sample${i}`]: { value: s.body } };
  });
  const problems = await lint(copy, { rules: { 'no-invalid-media-type-examples': { severity: 'error', allowAdditionalProperties: false } } });
  return [...undocumented, ...problems.map((p) => p.replace(/\/examples\/sample(\d+)\//, (_, i) => ` (${samples[Number(i)].o.key}: ${samples[Number(i)].what}) /`))];
}

describe.each(ENGINES)('the OpenAPI document against the API it describes on %s', (engine: EngineName) => {
  const t = filledLater<TestApp>();
  const limited = filledLater<TestApp>();
  let doc: any;
  const samples: Sample[] = [];
  /** Answers of failures tried on purpose: the status each should have. */
  const expected = new Map<Sample, number>();

  beforeAll(async () => {
    Object.assign(t, await createTestApp(engine));
    // The examples name objects of the demo dataset; its reseller sees them all.
    const demo = (await loadDemoData(t.admin, BASE)).data;
    // The database examples need a default mariadb 10.11 server (the demo dataset registers one only
    // when DEMO_MARIADB_URL is set), the subdomain examples a web server, the e-mail examples a mail
    // server to place the shop's package on. No worker runs here, so none is ever contacted.
    await placeholderServers(t);
    const reseller = demo.customers.find((c) => c.role === 'reseller')!.token;
    // The webhook examples read webhook 1 and delete the one the POST example creates (2): a
    // DELETE removes a webhook at once, and the lists of webhook 1 are read after it.
    await call(t.app, 'POST', '/webhooks', { token: reseller, body: { data: { type: 'webhook', attributes: { url: 'https://hooks.example.net/first', events: ['*'] } } } });
    const shop = demo.customers.find((c) => c.domain === 'shop-demo.example')!.token;
    doc = (await call(t.app, 'GET', '/openapi.json')).json;
    const ops = operations(doc);

    const send = async (o: Operation, what: string, url: string, req: { token?: string | null; body?: unknown; headers?: Record<string, string> } = {}, status?: number, app = t.app) => {
      const token = req.token === null ? undefined : (req.token ?? reseller);
      const r = await call(app, o.method as 'GET', url, { token, body: req.body, headers: { accept: VND, ...req.headers } });
      const sample = { o, what, status: r.status, type: String(r.headers['content-type']), body: r.json };
      samples.push(sample);
      if (status !== undefined) expected.set(sample, status);
      return r;
    };

    // Writes first (the GET examples name the job the POST creates), deletes last, the deepest paths
    // first: a forwarding target and an application password go before their address.
    const rank = (o: Operation) => ['POST', 'PATCH', 'GET', 'DELETE'].indexOf(o.method);
    const depth = (o: Operation) => (o.method === 'DELETE' ? -o.path.split('/').length : 0);
    // The panel's operations run on the session of the login example (the demo reseller's contact,
    // given that portal password): the cookie and its anti-CSRF header instead of a token; the TOTP
    // confirmation with the current code of the enrolment, its removal with a recovery code.
    const rita = await t.store.db.selectFrom('contacts').select('id').where('email', '=', EXAMPLE_LOGIN.email).executeTakeFirstOrThrow();
    await t.admin.customers.setPortalPassword(rita.id, EXAMPLE_LOGIN.password);
    const panel = { headers: {} as Record<string, string>, secret: '', recovery: '' };
    const panelBody = (o: Operation, body: unknown) =>
      o.key === 'POST /session/totp/confirm' ? codeBody(codeAt(panel.secret)) : o.key === 'DELETE /session/totp' ? codeBody(panel.recovery) : body;
    for (const o of [...ops].sort((a, b) => rank(a) - rank(b) || depth(a) - depth(b))) {
      const { url, body } = exampleRequest(o);
      if (!isPanel(o)) {
        await send(o, 'its examples', url, { body });
        continue;
      }
      const r = await send(o, 'its examples', url, { token: null, headers: panel.headers, body: panelBody(o, body) });
      if (o.key === 'POST /session') panel.headers = { cookie: `hostplane_session=${cookieOf(r.headers['set-cookie'])}`, 'x-csrf-token': r.json.data.attributes.csrf_token };
      if (o.key === 'POST /session/totp') panel.secret = r.json.data.attributes.secret;
      if (o.key === 'POST /session/totp/confirm') panel.recovery = r.json.data.attributes.recovery_codes[0];
    }

    for (const o of ops) {
      // The login needs none.
      if (o.key !== 'POST /session') await send(o, 'no credentials', exampleRequest(o).url, { token: null }, 401);
      await send(o, 'another API version', exampleRequest(o).url, { headers: { accept: 'application/vnd.hostplane.v2+json' } }, 406);
      if (o.op.parameters?.some((p: any) => p.in === 'query')) {
        const { url } = exampleRequest(o);
        await send(o, 'an unknown filter', `${url}?filter[no_such_filter]=1`, {}, 400);
        await send(o, 'a paged list', `${url}?page[number]=1&page[size]=1`, {}, 200);
      }
      if (hasPathParams(o)) {
        await send(o, 'a malformed URL', urlWith(o, '%zz'), {}, 400);
        await send(o, 'a too long path segment', urlWith(o, 'a'.repeat(3000)), {}, 414);
        if (o.op.responses[404]) {
          // A PATCH names its object in the body too (else the answer is 409 id_mismatch).
          const body = exampleRequest(o).body as { data: object } | undefined;
          const named = body && o.method === 'PATCH' ? { data: { ...body.data, id: 'nonexistent.example' } } : body;
          await send(o, 'an unknown object', unknownObjectUrl(o), { body: named }, 404);
        }
      }
      if (readsBody(o)) {
        const { url } = exampleRequest(o);
        await send(o, 'a body that is not JSON', url, { body: 'x', headers: { 'content-type': 'text/plain' } }, 415);
        await send(o, 'malformed JSON', url, { body: '{"data":', headers: { 'content-type': 'application/vnd.api+json' } }, 400);
        await send(o, 'a body over the limit', url, { body: `"${'x'.repeat(t.config.http.bodyLimit)}"` }, 413);
      }
      if (o.op.requestBody) await send(o, 'an empty document', exampleRequest(o).url, { body: {} }, 422);
    }

    // Failures particular to one operation.
    const op = (key: string) => ops.find((o) => o.key === key)!;
    const patchCustomer = exampleRequest(op('PATCH /customers/{id}'));
    await send(op('PATCH /customers/{id}'), 'by the customer itself', patchCustomer.url, { token: shop, body: patchCustomer.body }, 403);
    await send(op('PATCH /customers/{id}'), 'data.id of another customer', patchCustomer.url, { body: { data: { type: 'customer', id: '10003', attributes: {} } } }, 409);
    await send(op('PATCH /domains/{name}'), 'data.id of another domain', exampleRequest(op('PATCH /domains/{name}')).url, {
      body: { data: { type: 'domain', id: 'blog-demo.example', attributes: {} } },
    }, 409);
    await send(op('GET /domains/{name}'), 'a name that is not ACE-encodable', '/domains/a_b.example', {}, 422);
    await send(op('POST /dns-records'), 'the example record again', '/dns-records', { body: exampleRequest(op('POST /dns-records')).body }, 409);
    const managed = (await call(t.app, 'GET', '/dns-records?filter[domain]=shop-demo.example', { token: reseller })).json.data.find(
      (r: any) => r.attributes.tags[0] === 'managed',
    );
    await send(op('DELETE /dns-records/{id}'), 'a managed record', `/dns-records/${managed.id}`, {}, 403);
    const names = Array.from({ length: 11 }, (_, i) => `n${i}.example`).join(',');
    await send(op('GET /domain-availability/{domains}'), 'eleven names', `/domain-availability/${names}`, {}, 422);

    // E-mail addresses. The example address (1) is being deleted by now; a forward is live.
    const postEmail = op('POST /email-addresses');
    const emailBody = (attributes: object) => ({ data: { type: 'email-address', attributes } });
    await send(postEmail, 'the example address again', '/email-addresses', { body: exampleRequest(postEmail).body }, 409);
    await send(postEmail, 'a password that breaks the rules', '/email-addresses', {
      body: emailBody({ address: 'weak@shop-demo.example', address_type: 'mailbox', password: 'password' }),
    }, 422);
    await send(postEmail, "a domain of another customer", '/email-addresses', {
      token: shop, body: emailBody({ address: 'info@blog-demo.example', address_type: 'mailbox' }),
    }, 404);
    const forward = await send(postEmail, 'a forward', '/email-addresses', {
      body: emailBody({ address: 'sales@shop-demo.example', address_type: 'forward', forward_to: ['orders@shop-demo.example'] }),
    }, 202);
    const fwd = `/email-addresses/${forward.json.data.id}`;
    await send(op('PATCH /email-addresses/{id}'), 'an address being deleted', '/email-addresses/1', {
      body: { data: { type: 'email-address', id: '1', attributes: { description: 'late' } } },
    }, 409);
    await send(op('PATCH /email-addresses/{id}'), 'a password for a forward', fwd, {
      body: { data: { type: 'email-address', id: forward.json.data.id, attributes: { password: 'Vq7#mZ2!xB9?kR4&wT6s' } } },
    }, 422);
    await send(op('PATCH /email-addresses/{id}'), 'an autoresponder for a forward', fwd, {
      body: { data: { type: 'email-address', id: forward.json.data.id, attributes: { autoresponder: { active: true } } } },
    }, 422);
    await send(op('POST /email-addresses/{id}/password'), 'a forward', `${fwd}/password`, {}, 409);
    await send(op('POST /email-addresses/{id}/application-passwords'), 'a forward', `${fwd}/application-passwords`, {
      body: exampleRequest(op('POST /email-addresses/{id}/application-passwords')).body,
    }, 409);
    await send(op('POST /email-addresses/{id}/forward-to/{target}'), 'the address itself', `${fwd}/forward-to/sales%40shop-demo.example`, {}, 422);
    await send(op('POST /email-addresses/{id}/forward-to/{target}'), 'a target that is not an address', `${fwd}/forward-to/nobody`, {}, 422);
    await send(op('DELETE /email-addresses/{id}/forward-to/{target}'), 'a target it does not have', `${fwd}/forward-to/other%40shop-demo.example`, {}, 404);
    await send(op('DELETE /email-addresses/{id}/forward-to/{target}'), "a forward's last target", `${fwd}/forward-to/orders%40shop-demo.example`, {}, 409);
    await send(op('DELETE /email-addresses/{id}/application-passwords/{appId}'), 'an unknown application password', '/email-addresses/1/application-passwords/99999', {}, 404);

    // SSH keys: the example key again, a short RSA key.
    const postKey = op('POST /ssh-keys');
    await send(postKey, 'the example key again', '/ssh-keys', { body: exampleRequest(postKey).body }, 409);
    await send(postKey, 'a private key', '/ssh-keys', { body: { data: { type: 'ssh-key', attributes: { package_id: '2', public_key: '-----BEGIN OPENSSH PRIVATE KEY-----' } } } }, 422);

    // Over the rate limit (a server allowing one request per window), each from its own address.
    Object.assign(limited, await createTestApp(engine, { RATE_LIMIT_MAX: '1' }));
    for (const [i, o] of ops.entries()) {
      const from = `198.51.100.${i + 1}`;
      const { url, body } = exampleRequest(o);
      await call(limited.app, o.method as 'GET', url, { body, remoteAddress: from });
      const r = await limited.app.inject({ method: o.method as 'GET', url, headers: { accept: VND }, remoteAddress: from });
      const sample = { o, what: 'over the rate limit', status: r.statusCode, type: String(r.headers['content-type']), body: JSON.parse(r.body) };
      samples.push(sample);
      expected.set(sample, 429);
    }
  });
  afterAll(async () => {
    await t.close?.();
    await limited.close?.();
  });

  it('every operation, sent with the examples of its parameters and body, answers its documented success status', () => {
    const tried = samples.filter((s) => s.what === 'its examples');
    expect(tried.map((s) => s.o.key).sort()).toEqual(Object.keys(OPERATION_IDS).sort());
    for (const s of tried) expect(`${s.o.key} → ${s.status} ${String(JSON.stringify(s.body)).slice(0, 300)}`).toBe(`${s.o.key} → ${successStatus(s.o.op)} ${String(JSON.stringify(s.body)).slice(0, 300)}`);
  });

  it('each failure tried answers the status it should, and the operation documents that status', () => {
    expect(expected.size).toBeGreaterThan(80);
    for (const [s, status] of expected) {
      expect(`${s.o.key}, ${s.what} → ${s.status}`).toBe(`${s.o.key}, ${s.what} → ${status}`);
      expect(Object.keys(s.o.op.responses), `${s.o.key}, ${s.what}`).toContain(String(status));
    }
  });

  it('every answer — successes, paged lists, failures — fits the schema documented for its operation and status', async () => {
    expect(samples.length).toBeGreaterThan(100);
    expect(await schemaProblems(doc, samples)).toEqual([]);
    // A 204 is empty: no body, no content type.
    const empty = samples.filter((s) => s.status === 204);
    expect(empty.map((s) => s.o.key).sort()).toEqual(Object.keys(OPERATION_IDS).filter((k) => /forward-to|DELETE .*application-passwords|DELETE \/webhooks|DELETE \/session/.test(k)).sort());
    for (const s of empty) expect([s.type, s.body], `${s.o.key} ${s.what}`).toEqual(['undefined', undefined]);
  });
});
