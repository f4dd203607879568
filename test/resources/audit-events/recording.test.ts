// What the audit trail records (API guide "Audit events"; docs/decisions/0029-audit-trail.md),
// through HTTP: one event per write whatever its answer, with who, from where, what, the answer's
// status, job and request id and the Idempotency-Key; one per refused authentication; none for
// reads, 429s, unknown paths or operational routes; never a password, token or other secret.
import { Writable } from 'node:stream';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { BASE, ENGINES, call, createTestApp, freshStore } from '../../helpers/app.js';
import { useSeededApp } from '../../helpers/suite.js';
import { seedTenants } from '../../helpers/tenants.js';
import { recordIdOf } from '../../helpers/dns-records.js';
import { GOOD_PASSWORD, patchEmail, placeholderMailServer, postAppPassword, postEmail } from '../../helpers/email.js';
import { postDatabase } from '../../helpers/databases.js';
import { auditEventObject, auditRows, auditRowsAfter, lastAuditId, tokenIdOf } from '../../helpers/audit-events.js';
import { DatabaseServersRepository } from '../../../src/provisioning/databases/servers.repository.js';
import { AuditEventsService } from '../../../src/resources/audit-events/audit-events.service.js';
import { nowIso } from '../../../src/db/time.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const txt = (domain: string, name: string) => ({ data: { type: 'dns-record', attributes: { record_type: 'TXT', name, domain, data: `v-${name}` } } });

describe.each(ENGINES)('audit events: what is recorded, on %s', { timeout: 60_000 }, (engine) => {
  const { t, x } = useSeededApp(engine);
  const since = () => lastAuditId(t);

  it('POST, PATCH and DELETE each leave one event: caller, token id, address, method, path, status, job, request id, Idempotency-Key', async () => {
    const before = await since();
    const started = Date.now();
    const post = await call(t.app, 'POST', '/dns-records', {
      token: x.end1.token, body: txt(x.end1.domain, 'audit-post'), remoteAddress: '198.51.100.7', headers: { 'idempotency-key': '"run-7 retry 2"', 'x-request-id': 'audit-post-1' },
    });
    expect(post.status, post.body).toBe(202);
    const [event, ...more] = await auditRowsAfter(t, before);
    expect(more).toEqual([]);
    expect(event).toEqual({
      id: expect.any(Number),
      created_at: expect.any(String),
      expires_at: expect.any(String),
      customer_id: Number(x.end1.customerId),
      contact_id: x.end1.contactId,
      token_id: await tokenIdOf(t.store, x.end1.contactId),
      client_ip: '198.51.100.7',
      method: 'POST',
      path: '/dns-records',
      status: 202,
      request_id: 'audit-post-1',
      queue_job_id: Number(post.json.data.id),
      idempotency_key: '"run-7 retry 2"',
    });
    const at = Date.parse(event.created_at);
    expect(at).toBeGreaterThanOrEqual(started - 1);
    expect(at).toBeLessThanOrEqual(Date.now());
    // Kept for AUDIT_RETENTION_DAYS, 90 by default.
    expect(Date.parse(event.expires_at) - at).toBe(90 * DAY_MS);
    // The caller reads it back as an audit-event.
    const one = await call(t.app, 'GET', `/audit-events/${event.id}`, { token: x.end1.token });
    expect(one.json).toEqual({ data: auditEventObject(event), links: { self: `${BASE}/audit-events/${event.id}` } });
    expect(one.json.data.relationships['queue-job']).toEqual({ data: { type: 'queue-job', id: post.json.data.id } });

    // acme.sh deletes with a double slash; the event shows the path as routed. No Idempotency-Key:
    // null; no x-request-id sent: the one the answer carries.
    const id = recordIdOf(post);
    const del = await call(t.app, 'DELETE', `//dns-records/${id}`, { token: x.end1.token, headers: { 'content-type': 'application/vnd.api+json' } });
    expect(del.status, del.body).toBe(202);
    const [deleted] = await auditRowsAfter(t, event.id);
    expect(deleted).toMatchObject({ method: 'DELETE', path: `/dns-records/${id}`, status: 202, queue_job_id: Number(del.json.data.id), idempotency_key: null, request_id: del.headers['x-request-id'] });

    // A PATCH without a job: the reseller changes its end customer; the event is the reseller's.
    const patch = await call(t.app, 'PATCH', `/customers/${x.end2.customerId}`, {
      token: x.reseller.token, body: { data: { type: 'customer', id: x.end2.customerId, attributes: { external_customer_id: 'crm-2' } } },
    });
    expect(patch.status, patch.body).toBe(200);
    const [patched, ...rest] = await auditRowsAfter(t, deleted.id);
    expect(rest).toEqual([]);
    expect(patched).toMatchObject({
      method: 'PATCH', path: `/customers/${x.end2.customerId}`, status: 200, queue_job_id: null,
      customer_id: Number(x.reseller.customerId), contact_id: x.reseller.contactId, token_id: await tokenIdOf(t.store, x.reseller.contactId), client_ip: '127.0.0.1',
    });
  });

  it('a repeat answered from its Idempotency-Key (API guide "Safe retries") carries the job of the stored 202, as the first did; a replayed refusal none', async () => {
    const before = await since();
    const token = x.end1.token;
    const twice = async (method: 'POST' | 'DELETE', path: string, key: string, body?: unknown) => {
      const first = await call(t.app, method, path, { token, body, headers: { 'idempotency-key': key } });
      const again = await call(t.app, method, path, { token, body, headers: { 'idempotency-key': key } });
      expect(again.status, again.body).toBe(first.status);
      expect(again.body).toBe(first.body);
      return first;
    };
    const post = await twice('POST', '/dns-records', 'replay-post', txt(x.end1.domain, 'audit-replay'));
    const del = await twice('DELETE', `/dns-records/${recordIdOf(post)}`, 'replay-delete');
    const bad = await twice('POST', '/dns-records', 'replay-bad', { data: { type: 'dns-record', attributes: { record_type: 'TXT' } } });
    expect([post.status, del.status, bad.status]).toEqual([202, 202, 422]);
    // The resource's job (in links.queue-job) and the DELETE's job (the primary data).
    const [postJob, delJob] = [post.json.data.links['queue-job'].split('/').pop(), del.json.data.id];
    expect(postJob).not.toBe(delJob);

    await t.app.auditTrail.settled();
    const list = await call(t.app, 'GET', '/audit-events?filter[path]=/dns-records&page[size]=1000', { token });
    expect(list.status, list.body).toBe(200);
    const events = list.json.data.filter((e: { id: string }) => Number(e.id) > before).reverse();
    const job = (id: string | null) => (id === null ? null : { type: 'queue-job', id });
    expect(events.map((e: any) => [e.attributes.method, e.attributes.status, e.attributes.idempotency_key, e.attributes.queue_job_id, e.relationships['queue-job'].data])).toEqual([
      ['POST', 202, 'replay-post', postJob, job(postJob)],
      ['POST', 202, 'replay-post', postJob, job(postJob)],
      ['DELETE', 202, 'replay-delete', delJob, job(delJob)],
      ['DELETE', 202, 'replay-delete', delJob, job(delJob)],
      ['POST', 422, 'replay-bad', null, null],
      ['POST', 422, 'replay-bad', null, null],
    ]);
    // Each repeat is an event of its own (its own request id), the whole object as the stored row.
    const rows = await auditRowsAfter(t, before);
    expect(events).toEqual(rows.map(auditEventObject));
    expect(new Set(rows.map((r) => r.request_id)).size).toBe(6);
  });

  it('reads leave no event: lists, one object, a 404 read, the audit events themselves', async () => {
    const before = await since();
    for (const path of ['/domains', `/domains/${x.end1.domain}`, '/domains/nothing.example', `/dns-records?filter[domain]=${x.end1.domain}`, '/audit-events', '/audit-events/1']) {
      const r = await call(t.app, 'GET', path, { token: x.end1.token });
      expect([200, 404], path).toContain(r.status);
    }
    expect(await auditRowsAfter(t, before)).toEqual([]);
  });

  it('a refused authentication leaves one event without token, contact or customer, which only the operator sees', async () => {
    const before = await since();
    const wrong = await call(t.app, 'GET', '/domains?access_token=hp_leaked', { token: 'hp_not_a_token', remoteAddress: '203.0.113.9' });
    expect(wrong.status).toBe(401);
    const none = await call(t.app, 'POST', '/dns-records', { body: txt(x.end1.domain, 'nobody') });
    expect(none.status).toBe(401);
    const events = await auditRowsAfter(t, before);
    expect(events.map((e) => [e.method, e.path, e.status, e.customer_id, e.contact_id, e.token_id, e.queue_job_id])).toEqual([
      ['GET', '/domains?access_token=[Redacted]', 401, null, null, null, null],
      ['POST', '/dns-records', 401, null, null, null, null],
    ]);
    expect(events[0].client_ip).toBe('203.0.113.9');
    expect(JSON.stringify(events)).not.toMatch(/hp_not_a_token|hp_leaked/);
    for (const tenant of [x.reseller, x.end1, x.end2, x.solo]) {
      const list = await call(t.app, 'GET', '/audit-events?page[size]=1000', { token: tenant.token });
      expect(list.json.data.map((e: { id: string }) => e.id)).not.toContain(String(events[0].id));
      expect((await call(t.app, 'GET', `/audit-events/${events[0].id}`, { token: tenant.token })).status).toBe(404);
    }
    const operator = await new AuditEventsService(t).operatorList({ statuses: [401] }, 10);
    expect(operator.map((e) => e.id)).toEqual(expect.arrayContaining(events.map((e) => e.id)));
  });

  it('refused writes are recorded with their status; unknown paths, operational routes and reads of the limiter are not', async () => {
    const before = await since();
    const invalid = await call(t.app, 'POST', '/dns-records', { token: x.end1.token, body: { data: { type: 'dns-record', attributes: { record_type: 'TXT' } } } });
    expect(invalid.status).toBe(422);
    const foreign = await call(t.app, 'POST', '/dns-records', { token: x.end2.token, body: txt(x.end2.domain, 'foreign') });
    const notMine = await call(t.app, 'DELETE', `/dns-records/${recordIdOf(foreign)}`, { token: x.end1.token });
    expect(notMine.status).toBe(404);
    expect((await call(t.app, 'POST', '/no-such-endpoint', { token: x.end1.token, body: {} })).status).toBe(404);
    await call(t.app, 'POST', '/internal/mail-auth-report', { body: {} });
    const events = await auditRowsAfter(t, before);
    expect(events.map((e) => [e.method, e.path, e.status, e.customer_id])).toEqual([
      ['POST', '/dns-records', 422, Number(x.end1.customerId)],
      ['POST', '/dns-records', 202, Number(x.end2.customerId)],
      ['DELETE', `/dns-records/${recordIdOf(foreign)}`, 404, Number(x.end1.customerId)],
    ]);
  });

  it('no password, generated or chosen, no token and no query credential reaches an event', async () => {
    await new DatabaseServersRepository(t.store.db).add({
      name: 'db1', db_type: 'mariadb', version: '10.11', url: 'mysql://admin@127.0.0.1:9', access_hosts: '["%"]', is_default: 1, is_dedicated: 0, created_at: nowIso(),
    });
    await placeholderMailServer(t.store);
    const token = x.end1.token;
    const before = await since();
    const db = await postDatabase(t, token, { package_id: x.end1.packageId, db_type: 'mariadb', version: '10.11' });
    expect(db.status, db.body).toBe(202);
    const patchDb = await call(t.app, 'PATCH', `/databases/${db.json.data.id}`, { token, body: { data: { type: 'database', id: db.json.data.id, attributes: { description: 'shop' } } } });
    expect(patchDb.status, patchDb.body).toBe(200);
    const chosen = GOOD_PASSWORD;
    const mailbox = await postEmail(t, token, { address: `info@${x.end1.domain}`, address_type: 'mailbox', password: chosen });
    expect(mailbox.status, mailbox.body).toBe(202);
    const id = mailbox.json.data.id;
    const changed = 'Kp3$wN8!qZ5?tM2&hJ7x';
    const patchMail = await patchEmail(t, token, id, { password: changed });
    expect(patchMail.status, patchMail.body).toBe(200);
    const reset = await call(t.app, 'POST', `/email-addresses/${id}/password`, { token });
    expect(reset.status, reset.body).toBe(200);
    const app = await postAppPassword(t, token, id, { device: 'phone', application: 'mail' });
    expect(app.status, app.body).toBe(201);
    const query = await call(t.app, 'POST', '/dns-records?api_key=Qs9-query-secret&password=Qs9-other', { token, body: txt(x.end1.domain, 'query') });
    expect(query.status, query.body).toBe(202);

    const events = await auditRowsAfter(t, before);
    expect(events.map((e) => [e.method, e.path, e.status])).toEqual([
      ['POST', '/databases', 202],
      ['PATCH', `/databases/${db.json.data.id}`, 200],
      ['POST', '/email-addresses', 202],
      ['PATCH', `/email-addresses/${id}`, 200],
      ['POST', `/email-addresses/${id}/password`, 200],
      ['POST', `/email-addresses/${id}/application-passwords`, 201],
      ['POST', '/dns-records?api_key=[Redacted]&password=[Redacted]', 202],
    ]);
    const secrets = [db.json.data.attributes.password, chosen, changed, reset.json.data.attributes.password, app.json.data.attributes.password, 'Qs9-query-secret', 'Qs9-other'];
    expect(secrets.every((s) => typeof s === 'string' && s.length >= 9)).toBe(true);
    // Over every column of every event there is, tokens included.
    const everything = JSON.stringify(await auditRows(t));
    for (const s of [...secrets, x.end1.token, x.end2.token, x.reseller.token, x.solo.token]) expect(everything).not.toContain(s);
  });

  it('AUDIT_RETENTION_DAYS sets the expiry; a 429 is not recorded; AUDIT_LOG=off records nothing and the list still answers', async () => {
    const week = await createTestApp(engine, { AUDIT_RETENTION_DAYS: '7', RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW_S: '600' });
    try {
      const y = await seedTenants(week.admin);
      const answers = [];
      for (const name of ['a', 'b', 'c']) answers.push((await call(week.app, 'POST', '/dns-records', { token: y.end1.token, body: txt(y.end1.domain, name) })).status);
      expect(answers).toEqual([202, 202, 429]);
      const events = await auditRows(week);
      expect(events.map((e) => e.status)).toEqual([202, 202]);
      for (const e of events) expect(Date.parse(e.expires_at) - Date.parse(e.created_at)).toBe(7 * DAY_MS);
    } finally {
      await week.close();
    }
    const off = await createTestApp(engine, { AUDIT_LOG: 'off' });
    try {
      const y = await seedTenants(off.admin);
      expect((await call(off.app, 'POST', '/dns-records', { token: y.end1.token, body: txt(y.end1.domain, 'off') })).status).toBe(202);
      expect((await call(off.app, 'GET', '/domains', { token: 'hp_wrong' })).status).toBe(401);
      expect(await auditRows(off)).toEqual([]);
      const list = await call(off.app, 'GET', '/audit-events', { token: y.end1.token });
      expect(list.json).toEqual({
        links: { self: `${BASE}/audit-events`, first: `${BASE}/audit-events?page[number]=1&page[size]=100`, last: `${BASE}/audit-events?page[number]=1&page[size]=100`, prev: null, next: null },
        data: [],
        meta: { total: 0, page: { number: 1, size: 100, total_pages: 1 } },
      });
    } finally {
      await off.close();
    }
  });

  it('closing the app writes the events still waiting (serve closes the app before the store)', async () => {
    const ts = await freshStore(engine);
    try {
      const other = await createTestApp(engine, {}, { store: ts });
      const y = await seedTenants(other.admin);
      const answers = await Promise.all(['c1', 'c2', 'c3'].map((name) => call(other.app, 'POST', '/dns-records', { token: y.end1.token, body: txt(y.end1.domain, name) })));
      expect(answers.map((a) => a.status)).toEqual([202, 202, 202]);
      await other.close();
      // In the order answered, which concurrent requests need not keep.
      const jobs = (await auditRows({ store: ts.store })).map((e) => [e.method, e.status, e.queue_job_id]);
      expect(jobs.sort()).toEqual(answers.map((a) => ['POST', 202, Number(a.json.data.id)]).sort());
    } finally {
      await ts.drop();
    }
  });

  it('an event that cannot be stored: the answer still goes out, the event is logged at error level and counted', async () => {
    const lines: string[] = [];
    const logStream = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
    const broken = await createTestApp(engine, { LOG_LEVEL: 'error' }, { logStream });
    try {
      const y = await seedTenants(broken.admin);
      await sql`alter table audit_events rename to audit_events_away`.execute(broken.store.db);
      const r = await call(broken.app, 'POST', '/dns-records', { token: y.end1.token, body: txt(y.end1.domain, 'lost'), headers: { 'x-request-id': 'lost-1' } });
      expect(r.status, r.body).toBe(202);
      await broken.app.auditTrail.settled();
      const logged = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'audit event not stored');
      expect(logged).toHaveLength(1);
      expect(logged[0]).toMatchObject({ level: 50, reqId: 'lost-1', auditEvent: { method: 'POST', path: '/dns-records', status: 202, request_id: 'lost-1', queue_job_id: Number(r.json.data.id), customer_id: Number(y.end1.customerId) } });
      expect(JSON.stringify(logged)).not.toContain(y.end1.token);
      const metrics = await call(broken.app, 'GET', '/metrics');
      expect(metrics.body).toMatch(/^hostplane_audit_events_lost_total 1$/m);
    } finally {
      await sql`alter table audit_events_away rename to audit_events`.execute(broken.store.db).catch(() => {});
      await broken.close();
    }
  });
});
