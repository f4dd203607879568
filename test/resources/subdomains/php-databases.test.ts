// A webspace's PHP reaches the package's database (API guide "Databases" and "Subdomains";
// operator guide "Database servers"): on both engines, against the local stack (a private Caddy,
// PHP-FPM started by the worker) and the test MariaDB registered as the operator does, an
// index.php written with the credentials of POST /databases creates a table, inserts a row and
// prints it through mysqli; the row is then on the server. The accounts exist for the server's
// access hosts only: a web server whose address they do not cover is refused by MariaDB.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { describe, expect, it } from 'vitest';
import { ENGINES } from '../../helpers/app.js';
import { postDatabase, serverVersion } from '../../helpers/databases.js';
import { jobDone } from '../../helpers/jobs.js';
import { MARIADB_URL, testServer, useTestNames, withAdmin } from '../../helpers/mariadb.js';
import { requirable } from '../../helpers/required.js';
import { PHP, stackMissing } from '../../helpers/stack.js';
import { PHP_VERSION, browse, postSubdomain, useSubdomainsSuite, type SubdomainsSuite } from '../../helpers/subdomains.js';
import { DatabaseServersService } from '../../../src/admin/database-servers.service.js';

/** Why PHP-FPM cannot talk to MariaDB here: mysqli is Debian's php<version>-mysql. */
function mysqliMissing(): string | null {
  const fpm = PHP[PHP_VERSION];
  if (!fpm) return null; // stackMissing() says why
  const modules = spawnSync(fpm, ['-m'], { encoding: 'utf8' }).stdout ?? '';
  return /^mysqli$/m.test(modules) ? null : `PHP ${PHP_VERSION}'s FPM has no mysqli (Debian package php${PHP_VERSION}-mysql)`;
}

/** The test MariaDB as an operator gives it to `database-server add`: mysql://admin@host:port, no database. */
const SERVER_URL = MARIADB_URL ? new URL('/', MARIADB_URL).href.replace(/\/$/, '') : '';

const missing = stackMissing() ?? (MARIADB_URL ? null : 'TEST_MARIADB_URL is not set') ?? mysqliMissing();

/** What a customer's app does: connect, create its table, insert a row, print the newest row as JSON (mysqli gives every column as a string). */
function notesApp(db: { host: string; port: number; name: string; password: string }): string {
  return `<?php
try {
  $db = new mysqli('${db.host}', '${db.name}', '${db.password}', '${db.name}', ${db.port});
  $db->query('CREATE TABLE IF NOT EXISTS notes (id INT AUTO_INCREMENT PRIMARY KEY, body VARCHAR(100) NOT NULL)');
  $stmt = $db->prepare('INSERT INTO notes (body) VALUES (?)');
  $body = 'written by PHP ' . PHP_MAJOR_VERSION . '.' . PHP_MINOR_VERSION;
  $stmt->bind_param('s', $body);
  $stmt->execute();
  echo json_encode($db->query('SELECT id, body FROM notes ORDER BY id DESC LIMIT 1')->fetch_assoc());
} catch (mysqli_sql_exception $e) {
  http_response_code(500);
  echo 'mysqli: ', $e->getMessage();
}
`;
}

requirable(missing)('PHP in a webspace with the package\'s database', () => {
  describe.each(ENGINES)('on %s', { timeout: 90_000 }, (engine) => {
    const s: SubdomainsSuite = useSubdomainsSuite(engine);
    const names = useTestNames(() => [testServer()]);
    const servers = () => new DatabaseServersService(s.t.store.db);

    /** A customer whose plan offers the test server's version, with a webspace `site` at /<site>/ whose job is done. */
    const customerWithSite = async (site: string) => {
      const version = await serverVersion();
      const c = await s.customer({ linuxUser: names.next(), databaseVersions: [`mariadb-${version}`] });
      const r = await postSubdomain(s.t, c.token, { subdomain_type: 'webspace', domain: c.domain, subdomain: site, webspace: { path: `/${site}/`, php_version: PHP_VERSION } });
      expect(r.status, r.body).toBe(202);
      await jobDone(s.t, c.token, r);
      return { ...c, version, host: `${site}.${c.domain}`, dir: path.join(c.home, site) };
    };
    /** POST /databases as the customer; when its job is done: the answer's credentials and where its server is, as the operator names it. */
    const database = async (c: Awaited<ReturnType<typeof customerWithSite>>) => {
      const r = await postDatabase(s.t, c.token, { package_id: c.packageId, db_type: 'mariadb', version: c.version });
      expect(r.status, r.body).toBe(202);
      await jobDone(s.t, c.token, r);
      const a = r.json.data.attributes;
      const where = (await servers().byName(a.server)).host;
      const port = Number(where.slice(where.lastIndexOf(':') + 1));
      return { server: a.server as string, name: a.name as string, password: a.password as string, host: where.slice(0, where.lastIndexOf(':')), port };
    };

    it('an index.php with the credentials of POST /databases creates a table, inserts a row and prints it; the row is on the server', async () => {
      // As `hostplane admin database-server add` registers it: access hosts left to the default.
      const { server } = await servers().addAsItIs({ name: 'db-php', url: SERVER_URL, isDefault: true });
      expect(server.access_hosts).toEqual(['%']);
      const c = await customerWithSite('app');
      const db = await database(c);
      expect(db.server).toBe('db-php');
      await fs.writeFile(path.join(c.dir, 'index.php'), notesApp(db));

      const first = await browse(s.web, c.host, '/');
      expect(first, first.body).toMatchObject({ status: 200 });
      expect(JSON.parse(first.body)).toEqual({ id: '1', body: `written by PHP ${PHP_VERSION}` });
      // A second request is a second row: the table stays.
      expect(JSON.parse((await browse(s.web, c.host, '/')).body)).toEqual({ id: '2', body: `written by PHP ${PHP_VERSION}` });
      const rows = await withAdmin(testServer(), async (conn) => (await conn.query<mysql.RowDataPacket[]>(`SELECT id, body FROM \`${db.name}\`.notes ORDER BY id`))[0]);
      expect(rows.map((r) => ({ ...r }))).toEqual([
        { id: 1, body: `written by PHP ${PHP_VERSION}` },
        { id: 2, body: `written by PHP ${PHP_VERSION}` },
      ]);
    });

    it('the accounts are made for the server\'s access hosts: PHP on a web server they do not cover is refused, one they cover gets in', async () => {
      // Access hosts that leave out the address this web server connects from (loopback here).
      await servers().addAsItIs({ name: 'db-narrow', url: SERVER_URL, accessHosts: ['192.0.2.%'], isDefault: true });
      const c = await customerWithSite('shop');
      const refused = await database(c);
      expect(refused.server).toBe('db-narrow');
      await fs.writeFile(path.join(c.dir, 'index.php'), notesApp(refused));
      const denied = await browse(s.web, c.host, '/');
      expect(denied).toMatchObject({ status: 500, body: expect.stringMatching(new RegExp(`^mysqli: Access denied for user '${refused.name}'@'(localhost|127\\.0\\.0\\.1)'`)) });

      // The web server's address among them: the next database's accounts let its PHP in.
      await servers().addAsItIs({ name: 'db-wide', url: SERVER_URL, accessHosts: ['192.0.2.%', '127.0.0.1'], isDefault: true });
      const allowed = await database(c);
      expect(allowed.server).toBe('db-wide');
      await fs.writeFile(path.join(c.dir, 'index.php'), notesApp(allowed));
      const answer = await browse(s.web, c.host, '/');
      expect(answer, answer.body).toMatchObject({ status: 200 });
      expect(JSON.parse(answer.body)).toEqual({ id: '1', body: `written by PHP ${PHP_VERSION}` });
    });
  });
});
