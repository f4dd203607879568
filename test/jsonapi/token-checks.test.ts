// The token check of the request path (docs/decisions/0012-request-path.md): hot
// reads check the token in their own statement, every other route looks it up alone; either way a
// token is checked against the store on every request, so a revoke (or a deleted contact) stops it
// on the very next request, on every instance sharing the store, and a new token works at once.
// Two instances here: `a`, and `b` with a connection (SQLite) or pool (PostgreSQL) of its own on
// the same database, as two API servers have.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { BASE, ENGINES, call, createTestApp, freshStore, processUrl, type TestApp, type TestStore } from '../helpers/app.js';
import { basic, WWW_AUTHENTICATE as WWW } from '../helpers/auth.js';
import { runCli } from '../helpers/cli.js';
import { filledLater } from '../helpers/suite.js';
import { seedTenants, type Tenants } from '../helpers/tenants.js';
import { openStore } from '../../src/db/index.js';

const revoked = (url: string) => ({
  errors: [{ id: 'unauthorized', status: '401', title: 'Authentication required', detail: 'Invalid or revoked API token.' }],
  links: { self: `${BASE}${url}` },
});

describe.each(ENGINES)('token checks on %s', (engine) => {
  const ts = filledLater<TestStore>();
  const a = filledLater<TestApp>();
  const b = filledLater<TestApp>();
  const x = filledLater<Tenants>();

  beforeAll(async () => {
    Object.assign(ts, await freshStore(engine));
    Object.assign(a, await createTestApp(engine, {}, { store: ts }));
    // The second instance opens the database itself, as another API server would.
    const own = await openStore(ts.url, { schema: ts.schema, poolSize: 2 });
    Object.assign(b, await createTestApp(engine, {}, { store: { store: own, url: ts.url, schema: ts.schema, drop: () => own.close() } }));
    Object.assign(x, await seedTenants(a.admin));
  });
  afterAll(async () => {
    await a.close?.();
    await b.close?.();
    await b.store?.close();
    await ts.drop?.();
  });

  /**
   * What the reseller asks, and how each answers while its token is good: the reads that check the
   * token in their own statement (one object, unfiltered unpaged lists, a name or id that finds
   * nothing) and requests whose token is looked up alone (a paged list, a filter, a name that
   * cannot exist, a route without such a read).
   */
  const requests = () => [
    { url: `/domains/${x.end1.domain}`, status: 200 },
    { url: '/domains', status: 200 },
    { url: '/domains/nobody.example', status: 404 },
    { url: `/domains/${x.solo.domain}`, status: 404 },
    { url: '/customers', status: 200 },
    { url: `/customers/${x.end1.customerId}`, status: 200 },
    { url: `/customers/${x.solo.customerId}`, status: 404 },
    { url: '/packages', status: 200 },
    { url: `/packages/${x.end2.packageId}`, status: 200 },
    { url: '/domains?page[size]=1', status: 200 },
    { url: `/domains?filter[owner_id]=${x.end1.customerId}`, status: 200 },
    { url: '/domains/_acme-challenge.www.example.com', status: 422 },
    { url: '/customers/0123', status: 404 },
    { url: '/plans', status: 200 },
    { url: '/queue-jobs', status: 200 },
  ];

  /** Every request on both instances, in both header forms; the statuses they answered. */
  async function statuses(token: string) {
    const out: string[] = [];
    for (const app of [a.app, b.app]) {
      for (const { url } of requests()) {
        for (const authorization of [`token ${token}`, basic('token', token)]) {
          const r = await call(app, 'GET', url, { headers: { authorization } });
          out.push(`${url} ${r.status}`);
          if (r.status === 401) {
            expect(r.headers['www-authenticate']).toBe(WWW);
            expect(r.json).toEqual(revoked(url));
          }
        }
      }
    }
    return out;
  }
  const all = (status: number | null) => [a, b].flatMap(() => requests().flatMap((q) => Array(2).fill(`${q.url} ${status ?? q.status}`)));

  it('a token issued through the CLI works at once on both instances; revoked through the CLI, the next request on either is refused', async () => {
    const env = { DATABASE_URL: processUrl(ts) };
    const issued = await runCli(['admin', 'token', 'create', '--contact', String(x.reseller.contactId), '--json'], env);
    expect(issued.code).toBe(0);
    const { id, token } = JSON.parse(issued.stdout) as { id: number; token: string };
    expect(await statuses(token)).toEqual(all(null));

    const r = await runCli(['admin', 'token', 'revoke', String(id)], env);
    expect(r.code).toBe(0);
    expect(await statuses(token)).toEqual(all(401));
    // The reseller's other token is untouched.
    expect((await call(b.app, 'GET', `/domains/${x.end1.domain}`, { token: x.reseller.token })).status).toBe(200);
  });

  it('a token revoked through one instance is refused by the other on its next request, the hot reads included', async () => {
    const { tokenId, token } = await a.admin.customers.issueToken(x.reseller.contactId, 'revoked between two requests');
    // The reads as they are cached anywhere they could be: the same token, the same URLs, just before.
    expect(await statuses(token)).toEqual(all(null));
    await a.admin.customers.revokeToken(tokenId);
    expect(await statuses(token)).toEqual(all(401));
  });

  it('deleting a contact stops its token on both instances at once (API guide "Authentication")', async () => {
    const { contactId } = await a.admin.customers.createContact(Number(x.reseller.customerId), { name: 'Second', email: 'second@reseller.example' });
    const { token } = await a.admin.customers.issueToken(contactId, 'second contact');
    expect(await statuses(token)).toEqual(all(null));
    await b.admin.customers.deleteContact(contactId);
    expect(await statuses(token)).toEqual(all(401));
  });

  it('a read on the path of the hot reads never sees another transaction\'s uncommitted revoke', async () => {
    const { tokenId, token } = await a.admin.customers.issueToken(x.reseller.contactId, 'revoke rolled back');
    const url = `/domains/${x.end1.domain}`;
    let answered: Promise<{ status: number }> | undefined;
    await a.store.db
      .transaction()
      .execute(async (trx) => {
        await trx.updateTable('api_tokens').set({ revoked_at: new Date().toISOString() }).where('id', '=', tokenId).execute();
        // The request starts while the revoke is uncommitted and gets many turns of the event loop
        // to answer (on SQLite it waits for the transaction: one connection); then the revoke is
        // rolled back.
        answered = call(a.app, 'GET', url, { token });
        for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
        throw new Error('roll back');
      })
      .catch((err: Error) => expect(err.message).toBe('roll back'));
    expect((await answered!).status).toBe(200);
    const stored = await sql<{ revoked_at: string | null }>`select revoked_at from api_tokens where id = ${tokenId}`.execute(a.store.db);
    expect(stored.rows).toEqual([{ revoked_at: null }]);
  });

  it('a revoke committed by a transaction of either instance stops the token on both at once', async () => {
    for (const revoker of [a, b]) {
      const { tokenId, token } = await a.admin.customers.issueToken(x.reseller.contactId, 'revoked in a transaction');
      expect(await statuses(token)).toEqual(all(null));
      await revoker.store.db.transaction().execute(async (trx) => {
        await trx.selectFrom('api_tokens').select('id').where('id', '=', tokenId).execute();
        await trx.updateTable('api_tokens').set({ revoked_at: new Date().toISOString() }).where('id', '=', tokenId).execute();
      });
      expect(await statuses(token)).toEqual(all(401));
    }
  });

  it('both instances answer the hot reads with the same bytes', async () => {
    for (const { url, status } of requests()) {
      const [ra, rb] = [await call(a.app, 'GET', url, { token: x.reseller.token }), await call(b.app, 'GET', url, { token: x.reseller.token })];
      expect([ra.status, rb.status], url).toEqual([status, status]);
      expect(rb.body, url).toBe(ra.body);
      expect(rb.headers['content-type'], url).toBe(ra.headers['content-type']);
    }
  });
});
