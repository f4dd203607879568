// `hostplane node setup --roles db` on a booted Debian 13 host of the lab (docs/decisions/
// 0018-nodes-on-debian.md "One command per node"): MariaDB reachable from the network with
// hostplane's admin account, registered in the store; a second run changes nothing, drift is
// mended, and a host whose port 3306 a stranger holds is refused with nothing installed.
// The store is PostgreSQL on the api host, prepared here by hand until the api role makes it.
import { expect, it } from 'vitest';
import { preflight } from '../../src/lab/lab.js';
import { useLab } from '../helpers/lab.js';
import { requirable } from '../helpers/required.js';

const STORE = 'postgres://hostplane:store-pw-lab@api.lab.test/hostplane';
const setup = (name: string) => `hostplane node setup --roles db --name ${name} --store ${STORE}`;

requirable(preflight())('node setup --roles db in the lab', () => {
  const lab = useLab();

  it('prepares the store on the api host (PostgreSQL on the lab network, migrated)', async () => {
    const r = await lab.sh('api', [
      'set -e',
      'apt-get update -qq',
      'DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null',
      'conf=$(ls -d /etc/postgresql/*/main)',
      `echo "listen_addresses = '*'" > $conf/conf.d/lab.conf`,
      'echo "host all all 198.18.0.0/24 scram-sha-256" >> $conf/pg_hba.conf',
      'systemctl restart postgresql',
      `su postgres -c "psql -q -c \\"create role hostplane login password 'store-pw-lab'\\" -c 'create database hostplane owner hostplane'"`,
      `DATABASE_URL=${STORE} hostplane migrate`,
    ].join('\n'));
    expect(r.code, r.stderr).toBe(0);
  }, 600_000);

  it('a port a stranger holds stops it before anything is installed, naming the port and the program', async () => {
    await lab.sh('web', `systemd-run --unit=hpl-stranger node -e "require('net').createServer().listen(3306, '0.0.0.0')"; sleep 1`);
    const r = await lab.sh('web', setup('web1.lab.test'));
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("hostplane: nothing was changed:\n  - tcp port 3306 (db) is held by node, not by the role's own daemon\n");
    expect((await lab.sh('web', 'dpkg-query -W -f="${db:Status-Status}" mariadb-server')).stdout).not.toBe('installed');
  }, 120_000);

  it('sets up MariaDB: the client logs in as hostplane over the network; the server is registered in the store', async () => {
    const r = await lab.sh('db', setup('db1.lab.test'));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('node setup: installing mariadb-server\n');
    expect(r.stderr).toContain('node setup: registered database server db1 (mysql://hostplane@db1.lab.test:3306)\n');
    expect(r.stderr).toMatch(/node setup: db1\.lab\.test is set up as db\n$/);
    const password = (await lab.sh('db', 'cat /etc/hostplane/db-admin.password')).stdout.trim();
    expect(password).toMatch(/^[A-Za-z0-9]{32}$/);
    expect((await lab.sh('db', 'stat -c %a /etc/hostplane/db-admin.password')).stdout.trim()).toBe('600');
    const login = lab.client('mariadb', ['--host=198.18.0.13', '--user=hostplane', `--password=${password}`, '--batch', '--skip-column-names', '-e', 'select current_user()']);
    expect({ code: login.code, out: login.stdout.trim() }, login.stderr).toEqual({ code: 0, out: 'hostplane@%' });
    const list = await lab.sh('api', `DATABASE_URL=${STORE} hostplane admin database-server list --json`);
    expect(JSON.parse(list.stdout)).toEqual([
      expect.objectContaining({ name: 'db1', db_type: 'mariadb', version: expect.stringMatching(/^11\.\d+$/), host: 'db1.lab.test:3306', admin_user: 'hostplane', default: true }),
    ]);
  }, 600_000);

  it('a second run changes nothing: no restart, the same password, registered once', async () => {
    const pid = async () => (await lab.sh('db', 'systemctl show -p MainPID --value mariadb')).stdout.trim();
    const before = await pid();
    const r = await lab.sh('db', setup('db1.lab.test'));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('node setup: role db\nnode setup: database server db1 is registered already\nnode setup: db1.lab.test is set up as db\n');
    expect(await pid()).toBe(before);
  }, 300_000);

  it('drift is mended: a config edited by hand is put back and MariaDB restarted, reachable again', async () => {
    await lab.sh('db', "sed -i 's/0.0.0.0/127.0.0.1/' /etc/mysql/mariadb.conf.d/60-hostplane.cnf && systemctl restart mariadb");
    const password = (await lab.sh('db', 'cat /etc/hostplane/db-admin.password')).stdout.trim();
    const login = () => lab.client('mariadb', ['--host=198.18.0.13', '--user=hostplane', `--password=${password}`, '--connect-timeout=3', '-e', 'select 1']);
    expect(login().code).not.toBe(0);
    const r = await lab.sh('db', setup('db1.lab.test'));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('node setup: restarting mariadb.service: its configuration changed\n');
    const again = login();
    expect(again.code, again.stderr).toBe(0);
    expect((await lab.sh('db', 'mariadb -N -e "select @@skip_name_resolve"')).stdout.trim()).toBe('1');
  }, 300_000);
});
