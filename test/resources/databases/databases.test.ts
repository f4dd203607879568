// /databases through HTTP against the real MariaDB at TEST_MARIADB_URL (API guide "Databases",
// "Queue jobs"): the 202 answers with the one-time password, jobs that are done only when the
// credentials really work (or are really gone), the offered combinations, max_databases, PATCH of
// the description, filters, tenancy, and no plaintext password at rest.
import { describe, expect, it } from 'vitest';
import { BASE, ENGINES, call } from '../../helpers/app.js';
import { errorBody, invalidAttribute, notFoundAt } from '../../helpers/errors.js';
import { login, loginResult, mariadbClient, requireMariadb, testServer } from '../../helpers/mariadb.js';
import { SERVER, accountsOf, postDatabase, schemasOn, useDatabasesSuite } from '../../helpers/databases.js';
import { jobDone } from '../../helpers/jobs.js';
import { QueueRepository } from '../../../src/queue/queue.repository.js';
import { DatabasesRepository } from '../../../src/resources/databases/databases.repository.js';

const PASSWORD = /^[A-Za-z0-9]{20}$/;

requireMariadb()('databases', () => {
  describe.each(ENGINES)('on %s', { timeout: 60_000 }, (engine) => {
    const s = useDatabasesSuite(engine);
    const token = () => s.x.end1.token;

    const created = (packageId: string, description?: string) => s.created(packageId, description);

    it('POST → 202 with the database and its one-time password; when the job is done the password logs in and sees that database only', async () => {
      const pkg = await s.newPackage();
      const r = await postDatabase(s.t, token(), { package_id: pkg.id, db_type: 'mariadb', version: s.version, description: 'shop' });
      expect(r.status, r.body).toBe(202);
      const id = r.json.data.id;
      const jobUrl = r.json.data.links['queue-job'];
      expect(jobUrl).toMatch(new RegExp(`^${BASE}/queue-jobs/[0-9]+$`));
      expect(r.headers['content-location']).toBe(jobUrl);
      const name = `${pkg.linuxUser}_1`;
      const password = r.json.data.attributes.password;
      expect(password).toMatch(PASSWORD);
      expect(r.json).toEqual({
        data: {
          type: 'database',
          id: expect.stringMatching(/^[0-9]+$/),
          attributes: {
            package_id: pkg.id, db_type: 'mariadb', version: s.version, server: SERVER, name, username: name,
            description: 'shop', usage: null, created_at: expect.any(String), password,
          },
          relationships: { package: { data: { type: 'package', id: pkg.id } } },
          links: { self: `${BASE}/databases/${id}`, 'queue-job': jobUrl },
        },
        links: { self: `${BASE}/databases` },
      });
      // Attribute order (API guide "Databases"); data comes first in a single-resource document.
      expect(Object.keys(r.json.data.attributes)).toEqual(['package_id', 'db_type', 'version', 'server', 'name', 'username', 'description', 'usage', 'created_at', 'password']);
      expect(r.body.startsWith('{"data":')).toBe(true);

      await jobDone(s.t, token(), r);
      const conn = await login(testServer(), name, password);
      try {
        const [dbs] = await conn.query<any[]>('SHOW DATABASES');
        expect(dbs.map((d) => d.Database).sort()).toEqual(['information_schema', name].sort());
        await conn.query(`CREATE TABLE \`${name}\`.t (id INT PRIMARY KEY)`);
      } finally {
        await conn.end();
      }
      // And with the mariadb client, as from a customer's shell.
      const cli = await mariadbClient(testServer(), name, password, `CREATE TABLE \`${name}\`.u (id INT); SHOW TABLES FROM \`${name}\`; SELECT SCHEMA_NAME FROM information_schema.SCHEMATA ORDER BY 1`);
      expect(cli).toEqual({ code: 0, stdout: `t\nu\n${[name, 'information_schema'].sort().join('\n')}\n`, stderr: '' });
      const wrong = await mariadbClient(testServer(), name, `${password}x`, 'SELECT 1');
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toMatch(/Access denied for user/);
      // GET shows it without the password and without the job link.
      const g = await call(s.t.app, 'GET', `/databases/${id}`, { token: token() });
      expect(g.status).toBe(200);
      const { password: _pw, ...rest } = r.json.data.attributes;
      expect(g.json).toEqual({ data: { ...r.json.data, attributes: rest, links: { self: `${BASE}/databases/${id}` } }, links: { self: `${BASE}/databases/${id}` } });
    });

    it('names are derived from the Linux user and numbered; each database has its own user that cannot reach a sibling', async () => {
      const pkg = await s.newPackage();
      const a = await created(pkg.id);
      const b = await created(pkg.id);
      expect([a.name, b.name]).toEqual([`${pkg.linuxUser}_1`, `${pkg.linuxUser}_2`]);
      const conn = await login(testServer(), a.name, a.password);
      try {
        await expect(conn.query(`CREATE TABLE \`${b.name}\`.t (id INT)`)).rejects.toMatchObject({ code: expect.stringMatching(/^ER_(DB|TABLE)ACCESS_DENIED_ERROR$/) });
      } finally {
        await conn.end();
      }
    });

    it('the next name: the highest number after the package\'s part among all names that begin with it, another package\'s too, plus one; no name left → 409', async () => {
      // Two Linux users whose names differ only where namePrefix writes `_`: one part for both.
      const linuxUser = s.names.next('_q');
      const other = linuxUser.replace(/_q$/, '-q');
      const part = `${linuxUser}_`;
      const customerId = Number(s.x.end1.customerId);
      const { planId } = await s.t.admin.packages.createPlan({ name: s.names.next('plan'), maxDatabases: 5, databaseVersions: [`mariadb-${s.version}`] });
      const { packageId } = await s.t.admin.packages.createPackage({ customerId, planId, name: linuxUser, linuxUser });
      const { packageId: otherId } = await s.t.admin.packages.createPackage({ customerId, planId, name: other, linuxUser: other });
      // Rows as a create stores them (nothing on the server): a number after the part in each
      // package, one being deleted; endings that are no number; a name that only an unescaped
      // LIKE `_` would match.
      const repo = new DatabasesRepository(s.t.store.db);
      const row = (package_id: number, name: string) =>
        repo.insert({ customer_id: customerId, package_id, server_name: SERVER, db_type: 'mariadb', version: s.version, name, description: '' });
      await row(packageId, `${part}3`);
      await row(packageId, `${linuxUser}x99`);
      await repo.transition((await row(otherId, `${part}7`)).id, 'pending', 'deleting');
      await row(otherId, `${part}12x`);
      await row(otherId, `${part}`);
      const r = await postDatabase(s.t, token(), { package_id: String(packageId), db_type: 'mariadb', version: s.version });
      expect(r.status, r.body).toBe(202);
      expect(r.json.data.attributes.name).toBe(`${part}8`);
      await jobDone(s.t, token(), r);

      // 26 characters of the Linux user make the part; a sixth digit would make the name 33 long.
      const long = `${s.names.next('_')}${'l'.repeat(32)}`.slice(0, 32);
      const full = await s.t.admin.packages.createPackage({ customerId, planId, name: long, linuxUser: long });
      const longPart = `${long.slice(0, 26)}_`;
      await row(full.packageId, `${longPart}99999`);
      const jobs = () => s.t.store.db.selectFrom('queue_jobs').select('id').execute();
      const before = await jobs();
      const none = await postDatabase(s.t, token(), { package_id: String(full.packageId), db_type: 'mariadb', version: s.version });
      expect(none.json).toEqual(errorBody('limit_reached', 409, 'Plan limit reached', 'No database name is left for this package.', `${BASE}/databases`));
      expect(await jobs()).toEqual(before);
      const stored = await s.t.store.db.selectFrom('databases').select('name').where('package_id', '=', full.packageId).execute();
      expect(stored).toEqual([{ name: `${longPart}99999` }]);
    });

    it('a combination the package cannot create → 422 on the member, the detail lists what it can; nothing is stored', async () => {
      const pkg = await s.newPackage({ versions: [`mariadb-${s.version}`, 'mysql-8.0'] });
      const can = `This package can create mariadb ${s.version} databases (db_type and version).`;
      const v = await postDatabase(s.t, token(), { package_id: pkg.id, db_type: 'mariadb', version: '5.5' });
      expect(v.json).toEqual(invalidAttribute('/databases', 'version', `mariadb 5.5 is not available. ${can}`));
      // mysql-8.0 is in the plan, but no server provides it.
      const t = await postDatabase(s.t, token(), { package_id: pkg.id, db_type: 'mysql', version: '8.0' });
      expect(t.json).toEqual(invalidAttribute('/databases', 'db_type', `mysql 8.0 is not available. ${can}`));
      const none = await s.newPackage({ versions: ['mysql-8.0'] });
      const n = await postDatabase(s.t, token(), { package_id: none.id, db_type: 'mariadb', version: s.version });
      expect(n.json).toEqual(
        invalidAttribute('/databases', 'db_type', `mariadb ${s.version} is not available. This package cannot create databases: its plan offers no database version that a server provides.`),
      );
      const list = await call(s.t.app, 'GET', `/databases?filter[package_id]=${pkg.id},${none.id}`, { token: token() });
      expect(list.json.meta.total).toBe(0);
    });

    it('bad bodies → 422, a foreign or unknown package → 404', async () => {
      const pkg = await s.newPackage();
      const extra = await postDatabase(s.t, token(), { package_id: pkg.id, db_type: 'mariadb', version: s.version, name: 'mine' });
      expect(extra.status).toBe(422);
      expect(extra.json.errors[0]).toMatchObject({ id: 'invalid_api_data' });
      const missing = await postDatabase(s.t, token(), { db_type: 'mariadb', version: s.version });
      expect(missing.status).toBe(422);
      for (const packageId of [s.x.solo.packageId, '99999', 'abc']) {
        const r = await postDatabase(s.t, token(), { package_id: packageId, db_type: 'mariadb', version: s.version });
        expect(r.json, packageId).toEqual(notFoundAt(`${BASE}/databases`, 'package'));
      }
    });

    it('at max_databases → 409 limit_reached naming the limit; parallel POSTs never pass it', async () => {
      const pkg = await s.newPackage({ maxDatabases: 2 });
      const tries = await Promise.all(
        Array.from({ length: 5 }, () => postDatabase(s.t, token(), { package_id: pkg.id, db_type: 'mariadb', version: s.version })),
      );
      expect(tries.map((r) => r.status).sort()).toEqual([202, 202, 409, 409, 409]);
      for (const r of tries.filter((x) => x.status === 409)) {
        expect(r.json).toEqual(errorBody('limit_reached', 409, 'Plan limit reached', 'This package has reached its limit of 2 databases (max_databases of its plan).', `${BASE}/databases`));
      }
      for (const r of tries.filter((x) => x.status === 202)) await jobDone(s.t, token(), r);
      const list = await call(s.t.app, 'GET', `/databases?filter[package_id]=${pkg.id}`, { token: token() });
      expect(list.json.data.map((d: any) => d.attributes.name).sort()).toEqual([`${pkg.linuxUser}_1`, `${pkg.linuxUser}_2`]);
    });

    it('PATCH sets the description (null stores ""); other attributes → 422', async () => {
      const pkg = await s.newPackage();
      const db = await created(pkg.id, 'old');
      const patch = (attributes: Record<string, unknown>) =>
        call(s.t.app, 'PATCH', `/databases/${db.id}`, { token: token(), body: { data: { type: 'database', id: db.id, attributes } } });
      const r = await patch({ description: 'new' });
      expect(r.status).toBe(200);
      const get = await call(s.t.app, 'GET', `/databases/${db.id}`, { token: token() });
      expect(r.body).toBe(get.body);
      expect(r.json.data.attributes.description).toBe('new');
      expect((await patch({ description: null })).json.data.attributes.description).toBe('');
      const bad = await patch({ version: '8.0' });
      expect(bad.status).toBe(422);
      expect((await call(s.t.app, 'GET', `/databases/${db.id}`, { token: token() })).json.data.attributes.description).toBe('');
    });

    it('POST /databases/{id}/password → 202 with a new password; when the job is done the old one fails and the new one works', async () => {
      const pkg = await s.newPackage();
      const db = await created(pkg.id);
      const r = await call(s.t.app, 'POST', `/databases/${db.id}/password`, { token: token() });
      expect(r.status, r.body).toBe(202);
      const fresh = r.json.data.attributes.password;
      expect(fresh).toMatch(PASSWORD);
      expect(fresh).not.toBe(db.password);
      const { password: _old, ...before } = db.response.json.data.attributes;
      const { password: _new, ...after } = r.json.data.attributes;
      expect(after).toEqual(before);
      expect(r.headers['content-location']).toBe(r.json.data.links['queue-job']);
      expect(r.json.links).toEqual({ self: `${BASE}/databases/${db.id}/password` });
      await jobDone(s.t, token(), r);
      expect(await loginResult(testServer(), db.name, db.password)).toBe('denied');
      expect(await loginResult(testServer(), db.name, fresh)).toBe('ok');
    });

    it('DELETE → 202 with the queue-job; when it is done database and user are gone and GET answers 404', async () => {
      const pkg = await s.newPackage();
      const db = await created(pkg.id);
      const r = await call(s.t.app, 'DELETE', `/databases/${db.id}`, { token: token() });
      expect(r.status).toBe(202);
      expect(r.json.data).toMatchObject({
        type: 'queue-job',
        attributes: { job_type: 'database', action: 'delete', status: 'pending' },
        links: { object: `${BASE}/databases/${db.id}`, database: `${BASE}/databases/${db.id}` },
      });
      expect(r.headers['content-location']).toBe(`${BASE}/queue-jobs/${r.json.data.id}`);
      await jobDone(s.t, token(), r);
      expect(await schemasOn([db.name])).toEqual([]);
      expect(await accountsOf(db.name)).toEqual([]);
      expect((await call(s.t.app, 'GET', `/databases/${db.id}`, { token: token() })).json).toEqual(notFoundAt(`${BASE}/databases/${db.id}`, 'database'));
    });

    it('DELETE right after POST is allowed and wins: the jobs run in order and nothing is left', async () => {
      const pkg = await s.newPackage();
      const p = await postDatabase(s.t, token(), { package_id: pkg.id, db_type: 'mariadb', version: s.version });
      expect(p.status).toBe(202);
      const d = await call(s.t.app, 'DELETE', `/databases/${p.json.data.id}`, { token: token() });
      expect(d.status).toBe(202);
      const again = await call(s.t.app, 'DELETE', `/databases/${p.json.data.id}`, { token: token() });
      // Until its job has removed the row, a repeated DELETE answers the same job.
      if (again.status === 202) expect(again.json.data.id).toBe(d.json.data.id);
      else expect(again.status).toBe(404);
      await jobDone(s.t, token(), p);
      await jobDone(s.t, token(), d);
      const name = p.json.data.attributes.name;
      expect(await schemasOn([name])).toEqual([]);
      expect(await accountsOf(name)).toEqual([]);
      expect((await call(s.t.app, 'GET', `/databases/${p.json.data.id}`, { token: token() })).status).toBe(404);
    });

    it('a DELETE marks the database being deleted whatever its state now, not the state it read (a create job may have made it live meanwhile)', async () => {
      const pkg = await s.newPackage();
      const db = await created(pkg.id);
      const repo = new DatabasesRepository(s.t.store.db);
      const stateOf = async () => (await s.t.store.db.selectFrom('databases').select('state').where('id', '=', Number(db.id)).executeTakeFirstOrThrow()).state;
      for (const from of ['pending', 'live'] as const) {
        await s.t.store.db.updateTable('databases').set({ state: from }).where('id', '=', Number(db.id)).execute();
        expect(await repo.markDeleting(Number(db.id))).toBe(true);
        expect(await stateOf()).toBe('deleting');
      }
      expect(await repo.markDeleting(Number(db.id))).toBe(false);
      expect(await stateOf()).toBe('deleting');
      await s.t.store.db.updateTable('databases').set({ state: 'live' }).where('id', '=', Number(db.id)).execute();
      const d = await call(s.t.app, 'DELETE', `/databases/${db.id}`, { token: token() });
      expect(d.status).toBe(202);
      await jobDone(s.t, token(), d);
      expect(await schemasOn([db.name])).toEqual([]);
    });

    it('DELETE of a database being deleted answers its delete job, also when that job is already done (the moment before the row goes); after a failed one it enqueues another', async () => {
      const pkg = await s.newPackage();
      const db = await created(pkg.id);
      // The window of a delete job that has dropped everything and is marked done, its row not yet gone
      // as the DELETE's first read saw it: state deleting, the newest delete job done.
      await s.t.store.db.updateTable('databases').set({ state: 'deleting' }).where('id', '=', Number(db.id)).execute();
      const queue = new QueueRepository(s.t.store.db);
      const insertJob = (status: 'done' | 'failed') =>
        queue.insert({ customerId: Number(s.x.end1.customerId), jobType: 'database', action: 'delete', objectId: db.id, status, payload: {}, finishedAt: new Date().toISOString() });
      const done = await insertJob('done');
      const r = await call(s.t.app, 'DELETE', `/databases/${db.id}`, { token: token() });
      expect(r.status, r.body).toBe(202);
      expect(r.json.data.id).toBe(String(done.id));
      expect(r.json.data.attributes.status).toBe('done');
      const failed = await insertJob('failed');
      const again = await call(s.t.app, 'DELETE', `/databases/${db.id}`, { token: token() });
      expect(again.status).toBe(202);
      expect(Number(again.json.data.id)).toBeGreaterThan(failed.id);
      await jobDone(s.t, token(), again);
      expect(await schemasOn([db.name])).toEqual([]);
    });

    it('filters package_id, server, db_type and version; values that match nothing give an empty list', async () => {
      const pkg = await s.newPackage();
      const a = await created(pkg.id);
      const other = await s.newPackage();
      const b = await created(other.id);
      const ids = async (query: string) => {
        const r = await call(s.t.app, 'GET', `/databases?${query}`, { token: token() });
        expect(r.status, query).toBe(200);
        return r.json.data.map((d: any) => d.id).filter((id: string) => [a.id, b.id].includes(id));
      };
      expect(await ids(`filter[package_id]=${pkg.id}`)).toEqual([a.id]);
      expect(await ids(`filter[package_id]=${pkg.id},${other.id}`)).toEqual([a.id, b.id]);
      expect(await ids(`filter[server]=${SERVER}&filter[db_type]=mariadb&filter[version]=${s.version}`)).toEqual([a.id, b.id]);
      expect(await ids(`filter[package_id]=${other.id}&filter[db_type]=mariadb`)).toEqual([b.id]);
      for (const q of ['filter[server]=nope', 'filter[db_type]=mysql', 'filter[version]=8.0', 'filter[package_id]=abc']) expect(await ids(q), q).toEqual([]);
      const bad = await call(s.t.app, 'GET', '/databases?filter[name]=x', { token: token() });
      expect(bad.status).toBe(400);
    });

    it("another tenant gets 404 for every operation on a database and never sees it; the reseller does", async () => {
      const pkg = await s.newPackage();
      const db = await created(pkg.id, 'private');
      const before = (await call(s.t.app, 'GET', `/databases/${db.id}`, { token: token() })).body;
      for (const stranger of [s.x.solo.token, s.x.end2.token]) {
        const url = `${BASE}/databases/${db.id}`;
        expect((await call(s.t.app, 'GET', `/databases/${db.id}`, { token: stranger })).json).toEqual(notFoundAt(url, 'database'));
        const p = await call(s.t.app, 'PATCH', `/databases/${db.id}`, { token: stranger, body: { data: { type: 'database', id: db.id, attributes: { description: 'x' } } } });
        expect(p.json).toEqual(notFoundAt(url, 'database'));
        expect((await call(s.t.app, 'POST', `/databases/${db.id}/password`, { token: stranger })).json).toEqual(notFoundAt(`${url}/password`, 'database'));
        expect((await call(s.t.app, 'DELETE', `/databases/${db.id}`, { token: stranger })).json).toEqual(notFoundAt(url, 'database'));
        const list = await call(s.t.app, 'GET', `/databases?filter[package_id]=${pkg.id}`, { token: stranger });
        expect(list.json.data).toEqual([]);
      }
      expect((await call(s.t.app, 'GET', `/databases/${db.id}`, { token: token() })).body).toBe(before);
      expect(await loginResult(testServer(), db.name, db.password)).toBe('ok');
      expect((await call(s.t.app, 'GET', `/databases/${db.id}`, { token: s.x.reseller.token })).status).toBe(200);
    });

    it('no password is stored: neither the tables nor the job payloads hold one', async () => {
      const pkg = await s.newPackage();
      const db = await created(pkg.id);
      const reset = await call(s.t.app, 'POST', `/databases/${db.id}/password`, { token: token() });
      await jobDone(s.t, token(), reset);
      const passwords = [db.password, reset.json.data.attributes.password];
      const rows = JSON.stringify([
        await s.t.store.db.selectFrom('databases').selectAll().execute(),
        await s.t.store.db.selectFrom('queue_jobs').selectAll().execute(),
        await s.t.store.db.selectFrom('database_servers').selectAll().execute(),
      ]);
      for (const pw of passwords) expect(rows).not.toContain(pw);
      // What the jobs carry is the server's hash, nothing else.
      const jobs = await s.t.store.db.selectFrom('queue_jobs').select(['action', 'payload']).where('job_type', '=', 'database').where('object_id', '=', db.id).orderBy('id').execute();
      expect(jobs.map((j) => [j.action, Object.keys(JSON.parse(String(j.payload)))])).toEqual([['create', ['passwordHash']], ['update', ['passwordHash']]]);
    });
  });
});
