// `hostplane admin web-server add|list|set-default` and `admin package create --web-server`
// (docs/decisions/0008-web-servers.md), run in-process on each engine: what is
// stored and shown, the first server as the default, the default moving, and every refusal as one
// line (and one JSON object with --json) that changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from '../helpers/app.js';
import { newDatabase, runCli, type TestDb } from '../helpers/cli.js';

describe.each(ENGINES)('hostplane admin web-server on %s', (engine) => {
  let db: TestDb;
  const env = () => ({ DATABASE_URL: db.url });
  const json = async (args: string[]) => {
    const r = await runCli([...args, '--json'], env());
    expect({ code: r.code, stderr: r.stderr }, args.join(' ')).toEqual({ code: 0, stderr: '' });
    return JSON.parse(r.stdout);
  };
  const add = (name: string, more: string[] = []) => [
    'admin', 'web-server', 'add', '--name', name, '--caddy-admin', 'http://127.0.0.1:2019', '--http-listen', '0.0.0.0:80',
    '--address', '192.0.2.10,2001:db8::10', '--home-root', '/srv/www', ...more,
  ];
  beforeAll(async () => {
    db = await newDatabase(engine);
    expect((await runCli(['migrate'], env())).code).toBe(0);
  });
  afterAll(() => db?.drop());

  it('add stores what it was given and shows it; the first is the default; --default and set-default move it', async () => {
    const web1 = await json(add('web1', ['--https-listen', '[::]:443', '--php', '8.2=/usr/sbin/php-fpm8.2', '--php', '8.3=/usr/sbin/php-fpm8.3', '--socket-group', 'caddy']));
    expect(web1).toEqual({
      id: expect.stringMatching(/^[1-9][0-9]*$/), name: 'web1', caddy_admin: 'http://127.0.0.1:2019', http_listen: '0.0.0.0:80', https_listen: '[::]:443',
      addresses: ['192.0.2.10', '2001:db8::10'], home_root: '/srv/www', state_dir: '/srv/www/.hostplane',
      php: { '8.2': '/usr/sbin/php-fpm8.2', '8.3': '/usr/sbin/php-fpm8.3' }, socket_group: 'caddy', default: true, sftp_host: '192.0.2.10', sftp_port: 22, created_at: expect.any(String),
    });
    const web2 = await json(add('web2', ['--state-dir', '/var/lib/hostplane/web2']));
    expect(web2).toMatchObject({ name: 'web2', https_listen: null, php: {}, socket_group: null, state_dir: '/var/lib/hostplane/web2', default: false });
    expect((await json(add('web3', ['--default']))).default).toBe(true);
    expect((await json(['admin', 'web-server', 'list'])).map((s: any) => [s.name, s.default])).toEqual([['web1', false], ['web2', false], ['web3', true]]);
    expect(await json(['admin', 'web-server', 'set-default', 'web2'])).toMatchObject({ name: 'web2', default: true });
    const text = await runCli(['admin', 'web-server', 'list'], env());
    expect(text.stdout.split('\n')[0].split(/\s+/)).toEqual(['name', 'http_listen', 'https_listen', 'addresses', 'home_root', 'php', 'sftp', 'default']);
    expect(text.stdout).toMatch(/web1\s+0\.0\.0\.0:80\s+\[::\]:443\s+192\.0\.2\.10,2001:db8::10\s+\/srv\/www\s+8\.2,8\.3\s+192\.0\.2\.10:22\s+false/);
  });

  it('every refusal is one line (JSON with --json), exit 1, and nothing is stored', async () => {
    const before = (await json(['admin', 'web-server', 'list'])).length;
    const cases: [string[], string, string][] = [
      [add('Web_1'), 'invalid_api_data', '"Web_1" is not a server name: 1 to 32 of a-z, 0-9 and "-", starting and ending with a letter or digit, e.g. web1.'],
      [add('web1'), 'conflict', 'A web server named "web1" exists already.'],
      [['admin', 'web-server', 'add', '--name', 'w', '--caddy-admin', 'ftp://x', '--http-listen', ':80', '--address', '192.0.2.1', '--home-root', '/srv'], 'invalid_api_data',
        '--caddy-admin must be http://host:port of Caddy\'s admin API, e.g. http://127.0.0.1:2019; got "ftp://x".'],
      [add('w', ['--https-listen', '443']), 'invalid_api_data', '--https-listen must be host:port, e.g. 0.0.0.0:80, [::]:443 or :443 (every address); got "443".'],
      [['admin', 'web-server', 'add', '--name', 'w', '--caddy-admin', 'http://127.0.0.1:2019', '--http-listen', '0.0.0.0:80', '--address', 'web.example', '--home-root', '/srv'],
        'invalid_api_data', '--address takes IP addresses; "web.example" is not one.'],
      [['admin', 'web-server', 'add', '--name', 'w', '--caddy-admin', 'http://127.0.0.1:2019', '--http-listen', '0.0.0.0:80', '--address', '192.0.2.1', '--home-root', 'srv'],
        'invalid_api_data', '--home-root must be an absolute directory; got "srv".'],
      [add('w', ['--php', '8.2']), 'invalid_api_data', '--php takes <version>=<php-fpm binary>, e.g. 8.2=/usr/sbin/php-fpm8.2; got "8.2".'],
      [add('w', ['--php', '9.9=/usr/sbin/php-fpm9.9']), 'invalid_api_data', 'PHP 9.9 is not one of 5.6, 7.1, 7.2, 7.3, 7.4, 8.0, 8.1, 8.2, 8.3, 8.4, 8.5.'],
      [add('w', ['--socket-group', 'Caddy Users']), 'invalid_api_data', '--socket-group takes a group name, e.g. caddy; got "Caddy Users".'],
      [['admin', 'web-server', 'set-default', 'nope'], 'resource_not_found', 'No web server is named "nope".'],
      [add('w', ['--sftp-host', 'web 1']), 'invalid_api_data', '--sftp-host takes a host name or an IP address, e.g. web1.example.net; got "web 1".'],
      [['admin', 'web-server', 'set', 'nope', '--sftp-port', '2222'], 'resource_not_found', 'No web server is named "nope".'],
      [['admin', 'web-server', 'set', 'web1'], 'usage', 'Give --sftp-host <host> or --sftp-port <port> (or both).'],
    ];
    for (const [args, code, message] of cases) {
      const text = await runCli(args, env());
      expect({ code: text.code, stdout: text.stdout, stderr: text.stderr }, args.join(' ')).toEqual({ code: 1, stdout: '', stderr: `hostplane: ${message}\n` });
      const j = await runCli([...args, '--json'], env());
      expect(JSON.parse(j.stderr), args.join(' ')).toEqual({ error: { code, message } });
    }
    expect((await json(['admin', 'web-server', 'list'])).length).toBe(before);
  });

  it('package create --web-server places the package there; an unknown server is refused', async () => {
    const customer = await json(['admin', 'customer', 'create', '--name', 'Web Kunde', '--email', 'web@kunde.example']);
    const plan = await json(['admin', 'plan', 'create', '--name', 'Web']);
    const pkg = await json(['admin', 'package', 'create', '--customer', customer.id, '--plan', plan.id, '--name', 'p', '--web-server', 'web1']);
    expect(pkg).toMatchObject({ web_server: 'web1' });
    const none = await json(['admin', 'package', 'create', '--customer', customer.id, '--plan', plan.id, '--name', 'q']);
    expect(none).toMatchObject({ web_server: null });
    const bad = await runCli(['admin', 'package', 'create', '--customer', customer.id, '--plan', plan.id, '--name', 'r', '--web-server', 'nope'], env());
    expect(bad).toEqual({ code: 1, stdout: '', stderr: 'hostplane: No web server is named "nope" (see `hostplane admin web-server list`).\n' });
  });

  it('--sftp-host and --sftp-port say where customers connect for SFTP (API guide "SSH keys"); set changes them, "" goes back to the first address', async () => {
    const web4 = await json(add('web4', ['--sftp-host', 'web4.example.net', '--sftp-port', '2222']));
    expect(web4).toMatchObject({ sftp_host: 'web4.example.net', sftp_port: 2222 });
    expect(await json(['admin', 'web-server', 'set', 'web4', '--sftp-port', '22'])).toMatchObject({ name: 'web4', sftp_host: 'web4.example.net', sftp_port: 22 });
    expect(await runCli(['admin', 'web-server', 'set', 'web4', '--sftp-host', ''], env())).toEqual({ code: 0, stderr: '', stdout: 'web4: SFTP on 192.0.2.10 port 22.\n' });
    expect(await json(['admin', 'web-server', 'set', 'web4', '--sftp-host', '2001:db8::4'])).toMatchObject({ sftp_host: '2001:db8::4', sftp_port: 22 });
    const bad = await runCli(['admin', 'web-server', 'set', 'web4', '--sftp-port', '70000'], env());
    expect(bad).toEqual({ code: 1, stdout: '', stderr: "error: option '--sftp-port <port>' argument '70000' is invalid. must be a port from 1 to 65535.\n" });
    expect((await json(['admin', 'web-server', 'list'])).find((s: any) => s.name === 'web4')).toMatchObject({ sftp_host: '2001:db8::4', sftp_port: 22 });
  });
});
