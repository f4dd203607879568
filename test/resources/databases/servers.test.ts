// Several database servers through HTTP (API guide "Databases"): a
// second, private `mariadbd` (fresh datadir, its own port, stopped by PID) registered the way
// `hostplane admin database-server add` does it. Switching the default of (mariadb, version) sends
// new databases there and leaves the old ones where they are; password resets and DELETE act on
// the server each database lives on.
import { describe, expect, it, afterAll, beforeAll } from 'vitest';
import { ENGINES, call } from '../../helpers/app.js';
import { requirable } from '../../helpers/required.js';
import { loginResult, privateMariadbMissing, startPrivateMariadb, testServer, type PrivateMariadb } from '../../helpers/mariadb.js';
import { SERVER, schemasOn, useDatabasesSuite } from '../../helpers/databases.js';
import { jobDone } from '../../helpers/jobs.js';
import { DatabaseServersService } from '../../../src/admin/database-servers.service.js';
import type { DatabaseServerConn } from '../../../src/provisioning/databases/driver.js';

requirable(privateMariadbMissing())('databases on two servers', () => {
  let db2: PrivateMariadb | undefined;
  beforeAll(async () => {
    db2 = await startPrivateMariadb();
  }, 90_000);
  afterAll(() => db2?.stop());

  describe.each(ENGINES)('on %s', { timeout: 60_000 }, (engine) => {
    const s = useDatabasesSuite(engine);
    const token = () => s.x.end1.token;
    const second = (): DatabaseServerConn => ({ name: 'db-two', url: db2!.url, accessHosts: ['%'] });
    const get = async (id: string) => (await call(s.t.app, 'GET', `/databases/${id}`, { token: token() })).json.data.attributes;

    it('set-default sends new databases to the new server, old ones stay; reset and DELETE act where each lives', async () => {
      const servers = new DatabaseServersService(s.t.store.db);
      const pkg = await s.newPackage();
      const a = await s.created(pkg.id);
      expect(await get(a.id)).toMatchObject({ server: SERVER, name: a.name });

      // Registered beside the default: nothing changes until it becomes the default.
      const { server } = await servers.add({ name: 'db-two', dbType: 'mariadb', version: s.version, url: db2!.url });
      expect(server).toMatchObject({ name: 'db-two', default: false });
      const b = await s.created(pkg.id);
      expect((await get(b.id)).server).toBe(SERVER);

      await servers.setDefault('db-two');
      const c = await s.created(pkg.id);
      // The name is free on the new server, but numbering is per package, whatever the server.
      expect(await get(c.id)).toMatchObject({ server: 'db-two', name: `${pkg.linuxUser}_3` });
      expect(await loginResult(second(), c.name, c.password)).toBe('ok');
      expect(await loginResult(testServer(), c.name, c.password)).toBe('denied');
      // The old ones stay where they were, and still work there.
      for (const d of [a, b]) {
        expect((await get(d.id)).server).toBe(SERVER);
        expect(await loginResult(testServer(), d.name, d.password)).toBe('ok');
        expect(await loginResult(second(), d.name, d.password)).toBe('denied');
      }
      const onTwo = await call(s.t.app, 'GET', `/databases?filter[server]=db-two&filter[package_id]=${pkg.id}`, { token: token() });
      expect(onTwo.json.data.map((d: any) => d.id)).toEqual([c.id]);

      // A password reset of a database on the old server happens there.
      const reset = await call(s.t.app, 'POST', `/databases/${a.id}/password`, { token: token() });
      expect(reset.status, reset.body).toBe(202);
      await jobDone(s.t, token(), reset);
      const newPassword = reset.json.data.attributes.password;
      expect(await loginResult(testServer(), a.name, newPassword)).toBe('ok');
      expect(await loginResult(testServer(), a.name, a.password)).toBe('denied');

      // DELETE acts on the server each database lives on, and only there.
      for (const [d, on] of [[a, testServer()], [c, second()]] as const) {
        expect(await schemasOn(on, [d.name])).toEqual([d.name]);
        const del = await call(s.t.app, 'DELETE', `/databases/${d.id}`, { token: token() });
        expect(del.status, del.body).toBe(202);
        await jobDone(s.t, token(), del);
        expect((await call(s.t.app, 'GET', `/databases/${d.id}`, { token: token() })).status).toBe(404);
        expect(await schemasOn(on, [d.name])).toEqual([]);
        expect(await loginResult(on, d.name, d.id === a.id ? newPassword : d.password)).toBe('denied');
      }
      // b is untouched on the old server.
      expect(await schemasOn(testServer(), [b.name])).toEqual([b.name]);
      expect(await loginResult(testServer(), b.name, b.password)).toBe('ok');
    });
  });
});
