// `hostplane node setup` on a host it must not change (docs/decisions/0018-nodes-on-debian.md "One
// command per node"): this Debian 12 machine is refused with every reason, nothing is written; a
// word that is no role is a usage error. The real setup runs in the lab (test/lab/node-db.test.ts).
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

// On a Debian 13 machine these commands would set it up: they run only where they are refused.
const DEBIAN_12 = /^VERSION_ID="12"$/m.test(fs.readFileSync('/etc/os-release', 'utf8'));

const WRITTEN = ['/etc/mysql/mariadb.conf.d/60-hostplane.cnf', '/etc/hostplane/db-admin.password'];

describe.skipIf(!DEBIAN_12)('hostplane node setup, refused (on Debian 12)', () => {
  it('on Debian 12: exit 1, the release named, nothing written', async () => {
    const before = WRITTEN.map((f) => fs.existsSync(f));
    const r = await runCli(['node', 'setup', '--roles', 'db', '--name', 'db1.example.net', '--store', 'postgres://hp@api.example.net/hostplane'], {});
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('hostplane: nothing was changed:\n  - this is Debian GNU/Linux 12 (bookworm): hostplane node setup runs on Debian 13 (trixie)\n');
    expect(WRITTEN.map((f) => fs.existsSync(f))).toEqual(before);
  });

  it('every reason at once: the release, the name, the missing --store, an unknown setting, a bad address', async () => {
    const r = await runCli(['node', 'setup', '--roles', 'web,mail', '--name', 'web1', '--set', 'NO_SUCH=1', '--address', 'web1'], {});
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'hostplane: nothing was changed:\n' +
        '  - this is Debian GNU/Linux 12 (bookworm): hostplane node setup runs on Debian 13 (trixie)\n' +
        '  - --name "web1" is not the host\'s full domain name (e.g. web1.example.net)\n' +
        '  - --address "web1" is not an IPv4 or IPv6 address\n' +
        '  - --store is required without the api role: the postgres://… URL the api node printed\n' +
        '  - --set NO_SUCH: not a setting (docs/operator-guide.md "Settings")\n',
    );
  });

  it('a word that is no role: exit 2, the roles listed', async () => {
    const r = await runCli(['node', 'setup', '--roles', 'db,ftp', '--name', 'db1.example.net'], {});
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('hostplane: --roles: ftp is not a role (roles: api, dns, web, mail, db)\n');
  });
});
