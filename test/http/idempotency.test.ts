// Idempotency-Key through HTTP (API guide "Safe retries"; docs/decisions/0026-safe-retries.md): a
// repeat of a write with the same key by the same token answers the first answer — status, headers,
// body, byte for byte — and runs nothing again; another request with the key answers 422, a repeat
// while the first still runs 409; keys are the token's; the store holds them, so a second instance
// and a restarted one answer repeats too; a 5xx or a first request whose instance is gone frees the key; expired
// keys are free again and purged.
import { PassThrough, Writable } from 'node:stream';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mailReportKey } from '../../src/provisioning/mail/servers.repository.js';
import { ABANDONED_AFTER_MS } from '../../src/http/idempotency.js';
import { RELEASE_AFTER_MS } from '../../src/http/idempotency-locks.js';
import { MAX_KEY_LENGTH } from '../../src/http/idempotency-key.js';
import { hashToken } from '../../src/auth/tokens.js';
import { BASE, ENGINES, call, createTestApp, freshStore, type TestApp, type TestStore } from '../helpers/app.js';
import { errorBody } from '../helpers/errors.js';
import { WebServersService } from '../../src/admin/web-servers.service.js';
import { filledLater } from '../helpers/suite.js';
import { placeholderServers } from '../helpers/placeholder-servers.js';
import { seedTenants, type Tenants } from '../helpers/tenants.js';
import { newKey } from '../helpers/ssh-keys.js';
import { waitFor } from '../helpers/wait.js';
import {
  answerOf, countOf, createDoc, createObjects, freshKey, otherInstance, storedKeys, txtRecord, updateDoc, withKey, type Objects,
} from '../helpers/safe-retries.js';

const reused = (url: string) =>
  errorBody('idempotency_key_reused', 422, 'Idempotency key reused', 'This Idempotency-Key was used for another request (method, path or body); use a new key for a new request.', `${BASE}${url}`, { header: 'Idempotency-Key' });
const inUse = (url: string) =>
  errorBody('idempotency_key_in_use', 409, 'Idempotency key in use', 'A request with this Idempotency-Key is still being answered; repeat it once that one has its answer.', `${BASE}${url}`, { header: 'Idempotency-Key' });
const malformed = (url: string) =>
  errorBody('invalid_header', 400, 'Invalid request header', 'Idempotency-Key must be 1 to 255 printable ASCII characters: a quoted string ("…") or a token without spaces.', `${BASE}${url}`, { header: 'Idempotency-Key' });

describe.each(ENGINES)('Idempotency-Key on %s', { timeout: 90_000 }, (engine) => {
  const ts = filledLater<TestStore>();
  const a = filledLater<TestApp>();
  /** A second instance on the same database. */
  const b = filledLater<TestApp>();
  const x = filledLater<Tenants>();
  const o = filledLater<Objects>();
  /** What `a` logged (warnings and worse). */
  const logs: string[] = [];

  beforeAll(async () => {
    Object.assign(ts, await freshStore(engine));
    const logStream = new Writable({ write: (chunk, _enc, done) => { logs.push(String(chunk)); done(); } });
    Object.assign(a, await createTestApp(engine, { LOG_LEVEL: 'warn' }, { store: ts, logStream }));
    Object.assign(b, await otherInstance(engine, ts));
    await placeholderServers(a);
    Object.assign(x, await seedTenants(a.admin));
    Object.assign(o, await createObjects(a, x.end1));
  }, 60_000);
  afterAll(async () => {
    await b.close?.();
    await a.close?.();
    await ts.drop?.();
  });

  const tokenIdOf = async (token: string) => (await a.store.db.selectFrom('api_tokens').select('id').where('token_hash', '=', hashToken(token)).executeTakeFirstOrThrow()).id;
  const records = async (token = x.end1.token) => (await call(a.app, 'GET', `/dns-records?filter[domain]=${x.end1.domain}`, { token })).json.meta.total as number;

  it('a repeat answers the first answer byte for byte — status, Content-Location, body — and creates nothing again', async () => {
    const key = freshKey();
    const [before, jobs] = [await records(), await countOf(a, 'queue_jobs')];
    const first = await withKey(a, 'POST', '/dns-records', x.end1.token, key, txtRecord(x.end1.domain, '_once'));
    expect(first.status, first.body).toBe(202);
    expect(first.headers['content-location']).toBe(first.json.data.links.self);
    for (let i = 0; i < 3; i++) {
      const again = await withKey(a, 'POST', '/dns-records', x.end1.token, key, txtRecord(x.end1.domain, '_once'));
      expect(answerOf(again)).toEqual(answerOf(first));
      expect(again.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
    }
    // The body's JSON as sent counts, not its spelling: another layout of the same document is the same request.
    const spaced = JSON.stringify(txtRecord(x.end1.domain, '_once'), null, 2);
    expect(answerOf(await withKey(a, 'POST', '/dns-records', x.end1.token, key, spaced))).toEqual(answerOf(first));
    expect([await records(), await countOf(a, 'queue_jobs')]).toEqual([before + 1, jobs + 1]);
  });

  it('two requests with one key at once: one runs, the other answers 409 or, once the first answered, its answer', async () => {
    const key = freshKey();
    const before = await records();
    const both = await Promise.all([0, 1].map(() => withKey(a, 'POST', '/dns-records', x.end1.token, key, txtRecord(x.end1.domain, '_twin'))));
    const ran = both.filter((r) => r.status === 202);
    expect(ran.length, JSON.stringify(both.map((r) => r.status))).toBeGreaterThanOrEqual(1);
    for (const r of both) if (r.status !== 202) expect([r.status, r.json]).toEqual([409, inUse('/dns-records')]);
    for (const r of ran) expect(answerOf(r)).toEqual(answerOf(ran[0]));
    expect(await records()).toBe(before + 1);
  });

  it('a repeat whose key was read with its token before the first answer was stored, and whose body came once that answer was stored, replays it', async () => {
    const key = freshKey();
    const doc = txtRecord(x.end1.domain, '_late');
    const before = await records();
    const first = await withKey(a, 'POST', '/dns-records', x.end1.token, key, doc);
    expect(first.status, first.body).toBe(202);
    // The repeat's headers now, while the first answer waits for its batch: its token (and key)
    // are read; its body only once that answer is stored and the key let go.
    const body = new PassThrough();
    const repeat = a.app.inject({
      method: 'POST', url: '/dns-records', payload: body,
      headers: { authorization: `token ${x.end1.token}`, 'content-type': 'application/vnd.api+json', 'idempotency-key': key },
    });
    await new Promise((resolve) => setTimeout(resolve, 5));
    await a.app.idempotencyKeys.settled();
    body.end(JSON.stringify(doc));
    const r = await repeat;
    expect(answerOf({ status: r.statusCode, headers: r.headers, body: r.body })).toEqual(answerOf(first));
    expect(await records()).toBe(before + 1);
  });

  it('PATCH and DELETE repeats answer the first answer (its ETag, its job) and change nothing again', async () => {
    const url = `/databases/${o.database}`;
    const key = freshKey();
    const first = await withKey(a, 'PATCH', url, x.end1.token, key, updateDoc('database', o.database, { description: 'first' }));
    expect(first.status, first.body).toBe(200);
    // Someone else changes it meanwhile; the repeat neither changes it back nor shows the new state.
    const other = await call(a.app, 'PATCH', url, { token: x.end1.token, body: updateDoc('database', o.database, { description: 'second' }) });
    const again = await withKey(a, 'PATCH', url, x.end1.token, key, updateDoc('database', o.database, { description: 'first' }));
    expect(answerOf(again)).toEqual(answerOf(first));
    expect(again.headers.etag).toBe(first.headers.etag);
    const now = await call(a.app, 'GET', url, { token: x.end1.token });
    expect([now.json.data.attributes.description, now.headers.etag]).toEqual(['second', other.headers.etag]);

    const del = `/ssh-keys/${o.sshKey}`;
    const dkey = freshKey();
    const removed = await withKey(a, 'DELETE', del, x.end1.token, dkey);
    expect(removed.status, removed.body).toBe(202);
    const jobs = await countOf(a, 'queue_jobs');
    expect(answerOf(await withKey(a, 'DELETE', del, x.end1.token, dkey))).toEqual(answerOf(removed));
    expect(await countOf(a, 'queue_jobs')).toBe(jobs);
  });

  it('a 4xx answer is kept: its repeat answers it again even once the request would succeed', async () => {
    const key = freshKey();
    const cname = createDoc('dns-record', { domain: x.end1.domain, name: '_c', record_type: 'CNAME', data: 'target.example.net', ttl: 300 });
    const txt = await call(a.app, 'POST', '/dns-records', { token: x.end1.token, body: txtRecord(x.end1.domain, '_c') });
    const first = await withKey(a, 'POST', '/dns-records', x.end1.token, key, cname);
    expect(first.status, first.body).toBe(409);
    // The clash goes (a pending record is deleted at once): a new request now succeeds, the repeat does not run.
    const id = String(txt.json.data.links['dns-record']).slice(`${BASE}/dns-records/`.length);
    expect((await call(a.app, 'DELETE', `/dns-records/${id}`, { token: x.end1.token })).status).toBe(202);
    expect(answerOf(await withKey(a, 'POST', '/dns-records', x.end1.token, key, cname))).toEqual(answerOf(first));
    expect((await withKey(a, 'POST', '/dns-records', x.end1.token, freshKey(), cname)).status).toBe(202);
  });

  it('the same key with another request (body, path or method) answers 422 idempotency_key_reused and changes nothing', async () => {
    const key = freshKey();
    expect((await withKey(a, 'POST', '/dns-records', x.end1.token, key, txtRecord(x.end1.domain, '_k1'))).status).toBe(202);
    const [before, jobs] = [await records(), await countOf(a, 'queue_jobs')];
    const other = await withKey(a, 'POST', '/dns-records', x.end1.token, key, txtRecord(x.end1.domain, '_k2'));
    expect([other.status, other.json]).toEqual([422, reused('/dns-records')]);
    const path = `/email-addresses/${o.email}`;
    const patch = await withKey(a, 'PATCH', path, x.end1.token, key, updateDoc('email-address', o.email, { description: 'k' }));
    expect([patch.status, patch.json]).toEqual([422, reused(path)]);
    const pkey = freshKey();
    await withKey(a, 'PATCH', path, x.end1.token, pkey, updateDoc('email-address', o.email, { description: 'k' }));
    const del = await withKey(a, 'DELETE', path, x.end1.token, pkey);
    expect([del.status, del.json]).toEqual([422, reused(path)]);
    expect([await records(), await countOf(a, 'queue_jobs')]).toEqual([before, jobs]);
    expect((await call(a.app, 'GET', path, { token: x.end1.token })).json.data.attributes.description).toBe('k');
  });

  it('keys are the token\'s: another token of the same contact, and another customer, run their own request with the same key', async () => {
    const key = freshKey();
    const { token: second } = await a.admin.customers.issueToken(x.end1.contactId, 'second');
    const r1 = await withKey(a, 'POST', '/dns-records', x.end1.token, key, txtRecord(x.end1.domain, '_tok'));
    const r2 = await withKey(a, 'POST', '/dns-records', second, key, txtRecord(x.end1.domain, '_tok2'));
    const r3 = await withKey(a, 'POST', '/dns-records', x.end2.token, key, txtRecord(x.end2.domain, '_tok'));
    expect([r1.status, r2.status, r3.status]).toEqual([202, 202, 202]);
    expect(new Set([r1.json.data.id, r2.json.data.id, r3.json.data.id]).size).toBe(3);
    // Each token's repeat gets its own first answer.
    expect(answerOf(await withKey(a, 'POST', '/dns-records', second, key, txtRecord(x.end1.domain, '_tok2')))).toEqual(answerOf(r2));
  });

  it("a key sent with a token refused before the request runs (its networks, its scope) stays free: the same key then runs", async () => {
    const key = freshKey();
    const { token: nets } = await a.admin.customers.issueToken(x.end1.contactId, 'nets', { allowIps: ['192.0.2.0/24'] });
    const body = txtRecord(x.end1.domain, '_nets');
    const keys = await countOf(a, 'idempotency_keys');
    const outside = await call(a.app, 'POST', '/dns-records', { token: nets, body, headers: { 'idempotency-key': key }, remoteAddress: '198.51.100.7' });
    expect(outside.status).toBe(401);
    expect(await countOf(a, 'idempotency_keys')).toBe(keys);
    const inside = await call(a.app, 'POST', '/dns-records', { token: nets, body, headers: { 'idempotency-key': key }, remoteAddress: '192.0.2.9' });
    expect(inside.status, inside.body).toBe(202);
    const again = await call(a.app, 'POST', '/dns-records', { token: nets, body, headers: { 'idempotency-key': key }, remoteAddress: '192.0.2.9' });
    expect(answerOf(again)).toEqual(answerOf(inside));
    // A body that does not parse is refused before the key is looked at: nothing kept either.
    const broken = await call(a.app, 'POST', '/dns-records', { token: x.end1.token, body: '{"data": ', headers: { 'idempotency-key': key, 'content-type': 'application/vnd.api+json' } });
    expect(broken.status).toBe(400);
    expect(await countOf(a, 'idempotency_keys')).toBe(keys + 1);
    // A read-only token's write is refused by its scope before the body is read: its key is not kept.
    const { token: reader } = await a.admin.customers.issueToken(x.end1.contactId, 'reader', { readOnly: true });
    expect((await withKey(a, 'POST', '/dns-records', reader, key, body)).status).toBe(403);
    expect((await withKey(a, 'POST', '/dns-records', reader, key, body)).status).toBe(403);
    await a.app.idempotencyKeys.settled();
    expect(await countOf(a, 'idempotency_keys')).toBe(keys + 1);
    expect((await withKey(a, 'POST', '/dns-records', x.end1.token, key, txtRecord(x.end1.domain, '_nets2'))).status).toBe(202);
  });

  it('a malformed key answers 400 invalid_header; a quoted key and the same bare one are one key; 1 to 255 characters', async () => {
    const url = `/email-addresses/${o.email}`;
    const body = updateDoc('email-address', o.email, { description: 'keys' });
    for (const bad of ['', '""', 'a b', '"a"; x=1', '"a", "b"', 'schlüssel', '"tab\there"', '"unescaped \\ backslash"', 'x'.repeat(MAX_KEY_LENGTH + 1), `"${'y'.repeat(MAX_KEY_LENGTH + 1)}"`]) {
      const r = await withKey(a, 'PATCH', url, x.end1.token, bad, body);
      expect([r.status, r.json], bad).toEqual([400, malformed(url)]);
    }
    const before = await countOf(a, 'idempotency_keys');
    const id = freshKey();
    const bare = await withKey(a, 'PATCH', url, x.end1.token, id, body);
    expect(answerOf(await withKey(a, 'PATCH', url, x.end1.token, ` "${id}" `, body))).toEqual(answerOf(bare));
    for (const ok of ['k', 'z'.repeat(MAX_KEY_LENGTH), `"${'q'.repeat(MAX_KEY_LENGTH)}"`, '"with space, comma and \\"quote\\""']) {
      expect((await withKey(a, 'PATCH', url, x.end1.token, ok, body)).status, ok).toBe(200);
    }
    // The bare and the quoted spelling of `id` stored one key; the four others one each.
    expect(await countOf(a, 'idempotency_keys')).toBe(before + 5);
  });

  it('requests without the header store no key; GET ignores the header', async () => {
    const before = await countOf(a, 'idempotency_keys');
    expect((await call(a.app, 'POST', '/dns-records', { token: x.end1.token, body: txtRecord(x.end1.domain, '_plain') })).status).toBe(202);
    expect((await call(a.app, 'PATCH', `/databases/${o.database}`, { token: x.end1.token, body: updateDoc('database', o.database, { description: 'p' }) })).status).toBe(200);
    const g = await call(a.app, 'GET', `/databases/${o.database}`, { token: x.end1.token, headers: { 'idempotency-key': 'not a key' } });
    expect(g.status).toBe(200);
    expect(await countOf(a, 'idempotency_keys')).toBe(before);
  });

  it('a second instance on the same store replays the first\'s answers; a restarted one too', async () => {
    const key = freshKey();
    const first = await withKey(a, 'POST', '/dns-records', x.end1.token, key, txtRecord(x.end1.domain, '_inst'));
    // Stored within 50 ms of going out; the other instance reads the store.
    await a.app.idempotencyKeys.settled();
    expect(answerOf(await withKey(b, 'POST', '/dns-records', x.end1.token, key, txtRecord(x.end1.domain, '_inst')))).toEqual(answerOf(first));
    const started = await otherInstance(engine, ts);
    const rkey = freshKey();
    const before = await withKey(started, 'PATCH', `/databases/${o.database}`, x.end1.token, rkey, updateDoc('database', o.database, { description: 'restart' }));
    await started.close();
    const restarted = await otherInstance(engine, ts);
    try {
      expect(answerOf(await withKey(restarted, 'PATCH', `/databases/${o.database}`, x.end1.token, rkey, updateDoc('database', o.database, { description: 'restart' })))).toEqual(answerOf(before));
    } finally {
      await restarted.close();
    }
  });

  // A PATCH of antispam that changes the mail server's settings map answers once the server's rspamd
  // applies it (API guide "E-mail addresses"): a first request that stays running until the test
  // plays rspamd fetching the map (GET /internal/rspamd-settings), MAP_SPREAD_MS later.
  const authorization = `Basic ${Buffer.from(`mx-test:${mailReportKey('not-used')}`).toString('base64')}`;
  let mapTag = '';
  const fetchMap = async () => {
    const r = await a.app.inject({ method: 'GET', url: '/internal/rspamd-settings', headers: { authorization, ...(mapTag ? { 'if-none-match': mapTag } : {}) } });
    if (r.statusCode === 200) mapTag = String(r.headers.etag);
    return r.statusCode;
  };
  // The first request is running once its change is in and it waits for rspamd.
  const running = (antispam: string) =>
    waitFor(`antispam ${antispam} stored`, async () => (await a.store.db.selectFrom('email_addresses').select('antispam').where('id', '=', Number(o.email)).executeTakeFirst())?.antispam === antispam);
  // SQLite serves one API process (operator guide "SQLite"): a key in flight is held in that process,
  // so only PostgreSQL's instances answer each other's running keys.
  const instances = () => (engine === 'postgres' ? [a, b] : [a]);

  it('a repeat while the first is still running answers 409 on either instance; once the first answered, its answer', async () => {
    expect(await fetchMap()).toBe(200);
    const url = `/email-addresses/${o.email}`;
    const body = updateDoc('email-address', o.email, { antispam: 'junk-folder' });
    const key = freshKey();
    const first = withKey(a, 'PATCH', url, x.end1.token, key, body);
    await running('junk-folder');
    for (const app of instances()) {
      const r = await withKey(app, 'PATCH', url, x.end1.token, key, body);
      expect([r.status, r.json]).toEqual([409, inUse(url)]);
    }
    // rspamd takes the new map once the first request's change is in (it asks again until it is):
    // the first request answers.
    await waitFor('the changed map', async () => (await fetchMap()) === 200);
    const answered = await first;
    expect(answered.status, answered.body).toBe(200);
    for (const app of instances()) expect(answerOf(await withKey(app, 'PATCH', url, x.end1.token, key, body))).toEqual(answerOf(answered));
  });

  /** The sessions holding the lock of `key` of end1's token (PostgreSQL): their pids. */
  const lockHolders = async (key: string) =>
    (await sql<{ pid: number }>`
      with h as (select hashtextextended('hostplane idempotency ' || current_schema() || ' ' || ${`token:${await tokenIdOf(x.end1.token)}\n${key}`}::text, 0) as k)
      select l.pid from pg_locks l, h
      where l.locktype = 'advisory' and l.granted and l.objsubid = 1 and l.classid::bigint = ((h.k >> 32) & 4294967295) and l.objid::bigint = (h.k & 4294967295)`.execute(a.store.db)).rows.map((r) => r.pid);

  it.runIf(engine === 'postgres')(`a key's lock outlives its stored answer by ${RELEASE_AFTER_MS / 1000} s, then is released; a repeat meanwhile, on either instance, replays`, async () => {
    const key = freshKey();
    const doc = txtRecord(x.end1.domain, '_lock');
    const first = await withKey(a, 'POST', '/dns-records', x.end1.token, key, doc);
    await a.app.idempotencyKeys.settled();
    expect(await lockHolders(key)).toHaveLength(1);
    expect(answerOf(await withKey(b, 'POST', '/dns-records', x.end1.token, key, doc))).toEqual(answerOf(first));
    expect(answerOf(await withKey(a, 'POST', '/dns-records', x.end1.token, key, doc))).toEqual(answerOf(first));
    await waitFor('the lock released', async () => (await lockHolders(key)).length === 0);
  });

  it.runIf(engine === 'postgres')('keys sent one after another take their locks on one connection of the instance (the least busy: the first)', async () => {
    const keys = [freshKey(), freshKey(), freshKey(), freshKey(), freshKey()];
    for (const [i, key] of keys.entries()) expect((await withKey(a, 'POST', '/dns-records', x.end1.token, key, txtRecord(x.end1.domain, `_warm${i}`))).status).toBe(202);
    await a.app.idempotencyKeys.settled();
    const holders = await Promise.all(keys.map(lockHolders));
    expect(holders.map((h) => h.length)).toEqual([1, 1, 1, 1, 1]);
    expect(new Set(holders.flat()).size).toBe(1);
  });

  // On SQLite a key in flight lives and dies with its one process.
  it.runIf(engine === 'postgres')('a first request whose instance is gone (its key lock\'s connection ended) frees its key at once: a repeat runs, and the late answer is not kept', async () => {
    const url = `/email-addresses/${o.email}`;
    const body = updateDoc('email-address', o.email, { antispam: 'reject' });
    const key = freshKey();
    const first = withKey(a, 'PATCH', url, x.end1.token, key, body);
    await running('reject');
    // The server frees the session locks of a connection that ends, as when its instance dies.
    const [holder] = await lockHolders(key);
    expect((await sql<{ ended: boolean }>`select pg_terminate_backend(${holder}) as ended`.execute(a.store.db)).rows).toEqual([{ ended: true }]);
    const retry = await withKey(b, 'PATCH', url, x.end1.token, key, body);
    expect(retry.status, retry.body).toBe(200);
    await b.app.idempotencyKeys.settled();
    expect(await fetchMap()).toBe(200);
    expect((await first).status).toBe(200);
    await waitFor('the late answer refused', async () => logs.join('').includes('idempotency key was taken over before its first request answered'));
    expect(logs.join('')).toContain('a connection holding idempotency key locks broke');
    expect(answerOf(await withKey(a, 'PATCH', url, x.end1.token, key, body))).toEqual(answerOf(retry));
  });

  it(`a key an older version stored without an answer (its request in flight) answers 409, and is free after ${ABANDONED_AFTER_MS / 1000} s`, async () => {
    const key = freshKey();
    const now = new Date().toISOString();
    await a.store.db
      .insertInto('idempotency_keys')
      .values({ scope: `token:${await tokenIdOf(x.end1.token)}`, idempotency_key: key, fingerprint: '', claim: 'older', status: null, headers: null, body: null, created_at: now, expires_at: new Date(Date.now() + 86_400_000).toISOString() })
      .execute();
    const doc = txtRecord(x.end1.domain, '_older');
    const r = await withKey(a, 'POST', '/dns-records', x.end1.token, key, doc);
    expect([r.status, r.json]).toEqual([409, inUse('/dns-records')]);
    await a.store.db.updateTable('idempotency_keys').set({ created_at: new Date(Date.now() - ABANDONED_AFTER_MS - 1000).toISOString() }).where('idempotency_key', '=', key).execute();
    const ran = await withKey(a, 'POST', '/dns-records', x.end1.token, key, doc);
    expect(ran.status, ran.body).toBe(202);
    expect(answerOf(await withKey(a, 'POST', '/dns-records', x.end1.token, key, doc))).toEqual(answerOf(ran));
  });

  it('a key past its expiry is free again: the repeat runs anew', async () => {
    const key = freshKey();
    const first = await withKey(a, 'POST', '/dns-records', x.end1.token, key, txtRecord(x.end1.domain, '_exp'));
    await a.app.idempotencyKeys.settled();
    const rows = await a.store.db.selectFrom('idempotency_keys').select(['created_at', 'expires_at']).where('idempotency_key', '=', key).executeTakeFirstOrThrow();
    // 24 hours by default (IDEMPOTENCY_KEY_TTL_S).
    expect(Date.parse(rows.expires_at) - Date.parse(rows.created_at)).toBe(86_400_000);
    await a.store.db.updateTable('idempotency_keys').set({ expires_at: new Date(Date.now() - 1).toISOString() }).where('idempotency_key', '=', key).execute();
    const again = await withKey(a, 'POST', '/dns-records', x.end1.token, key, txtRecord(x.end1.domain, '_exp2'));
    expect(again.status, again.body).toBe(202);
    expect(again.json.data.id).not.toBe(first.json.data.id);
  });
});

describe.each(ENGINES)('Idempotency-Key: 5xx answers and the purge on %s', { timeout: 90_000 }, (engine) => {
  it('a first request answered with a 5xx frees its key: the repeat runs', async () => {
    const t = await createTestApp(engine);
    try {
      const x = await seedTenants(t.admin);
      const key = freshKey();
      const body = createDoc('ssh-key', { package_id: x.end1.packageId, public_key: newKey('ed25519', '5xx@test').line });
      // No web server is registered yet: 503 service_unavailable.
      const first = await withKey(t, 'POST', '/ssh-keys', x.end1.token, key, body);
      expect(first.status, first.body).toBe(503);
      expect(await countOf(t, 'idempotency_keys')).toBe(0);
      await new WebServersService(t.store.db).add({ name: 'web1', caddyAdmin: 'http://127.0.0.1:9', httpListen: '127.0.0.1:9', addresses: ['192.0.2.10'], homeRoot: '/srv/www', stateDir: '/srv/www/.hostplane' });
      const again = await withKey(t, 'POST', '/ssh-keys', x.end1.token, key, body);
      expect(again.status, again.body).toBe(202);
      expect(answerOf(await withKey(t, 'POST', '/ssh-keys', x.end1.token, key, body))).toEqual(answerOf(again));
    } finally {
      await t.close();
    }
  });

  it("the worker's scheduled purge deletes expired keys and keeps the others", async () => {
    const ts = await freshStore(engine);
    const t = await createTestApp(engine, {}, { store: ts });
    let worker: TestApp | undefined;
    try {
      const x = await seedTenants(t.admin);
      const keys = [freshKey(), freshKey(), freshKey()];
      for (const [i, key] of keys.entries()) {
        const r = await withKey(t, 'PATCH', `/customers/${x.end1.customerId}`, x.reseller.token, key, updateDoc('customer', x.end1.customerId, { external_customer_id: `p${i}` }));
        expect(r.status, r.body).toBe(200);
      }
      await t.app.idempotencyKeys.settled();
      await t.store.db.updateTable('idempotency_keys').set({ expires_at: new Date(Date.now() - 1).toISOString() }).where('idempotency_key', 'in', keys.slice(0, 2)).execute();
      worker = await createTestApp(engine, { JOB_POLL_MS: '50' }, { store: ts, worker: true });
      await waitFor('expired keys purged', async () => (await storedKeys(t)).length === 1);
      expect((await storedKeys(t)).map((k) => k.idempotency_key)).toEqual([keys[2]]);
    } finally {
      await worker?.close();
      await t.close();
      await ts.drop();
    }
  });
});
