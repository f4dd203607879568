// The local stack's DNS secondary (docs/decisions/0013-dns-secondaries.md;
// deploy/local/up.sh, down.sh): with STACK_DNS_SECONDARY=knot, up.sh starts a private Knot on
// port-base+16 as a secondary of a hostplane DNS server this test runs (HOSTPLANE_DNS), reading
// its catalog zone, and registers it through the admin CLI as "local-knot" in the test's store
// (each engine). Knot then serves the seeded zones with hostplane's serials; a DNS record POSTed
// through HTTP gets a job that is done, and Knot answers the record; down.sh removes the
// registration (from the store up.sh recorded) and stops Knot by its pid. Also: up.sh again on the
// same dir keeps the key, down.sh with a store it cannot reach says so and prints the command, and
// the refusals (Knot's port in use, an unknown STACK_DNS_SECONDARY, HOSTPLANE_DNS off loopback).
// The stack dir is a mkdtemp (mode 0700), so the mail part stays off: Caddy and Knot only. Needs
// what the stack needs and knotd (Debian: knot); skipped without, failed under CI_REQUIRE_ALL=1.
import fs from 'node:fs/promises';
import { existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import dnsPacket from 'dns-packet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, call, createTestApp, freshStore, processUrl, type TestApp, type TestStore } from '../helpers/app.js';
import { runCli, type CliRun } from '../helpers/cli.js';
import { txt } from '../helpers/dns-records.js';
import { query, udp } from '../helpers/dns.js';
import { jobDone } from '../helpers/jobs.js';
import { DOWN, UP, describeKnotStack, freeBase, script, unregisterHint, upOnFreePorts } from '../helpers/stack.js';
import { seedTenants, type Tenants } from '../helpers/tenants.js';
import { pollUntil } from '../helpers/wait.js';
import { alive, argv0 } from '../helpers/procs.js';

const STEP_MS = 60_000;

/** The SOA serial the DNS server on 127.0.0.1:`port` answers for `zone`, else its rcode or 'no answer'. */
async function soaAt(port: number, zone: string): Promise<number | string> {
  const reply = await udp(port, query(zone, 'SOA'), 300);
  if (!reply) return 'no answer';
  const p = dnsPacket.decode(reply);
  if (p.rcode !== 'NOERROR') return String(p.rcode);
  const soa = p.answers.find((a) => a.type === 'SOA');
  return soa ? (soa.data as { serial: number }).serial : 'no SOA';
}

/** The TXT strings the DNS server on 127.0.0.1:`port` answers for `name`, or null when it does not answer. */
async function txtAt(port: number, name: string): Promise<string[] | null> {
  const reply = await udp(port, query(name, 'TXT'), 300);
  if (!reply) return null;
  return dnsPacket.decode(reply).answers.filter((a) => a.type === 'TXT').map((a) => Buffer.concat(a.data as Buffer[]).toString());
}

const pidIn = async (file: string) => Number((await fs.readFile(file, 'utf8')).trim());

describeKnotStack('the local stack\'s DNS secondary: Knot reading hostplane\'s catalog zone (STACK_DNS_SECONDARY=knot)', () => {
  describe.each(ENGINES)('on %s', { timeout: STEP_MS }, (engine) => {
    let ts: TestStore;
    let t: TestApp;
    let x: Tenants;
    let databaseUrl: string;
    let root: string;
    let dir: string;
    let base: number;
    let up: CliRun;
    let keyName: string;
    let keyText: string;

    const env = () => ({ DATABASE_URL: databaseUrl, STACK_DNS_SECONDARY: 'knot', HOSTPLANE_DNS: `127.0.0.1:${t.dns!.port}` });
    const knotPort = () => base + 16;
    const secondaries = async (): Promise<Array<Record<string, string>>> => {
      const r = await runCli(['admin', 'dns-secondary', 'list', '--json'], { DATABASE_URL: databaseUrl });
      expect(r).toMatchObject({ code: 0, stderr: '' });
      return JSON.parse(r.stdout);
    };
    const postTxt = (name: string, data: string) =>
      call(t.app, 'POST', '/dns-records', { token: x.end1.token, body: { data: { type: 'dns-record', attributes: txt(name, data, { domain: x.end1.domain }) } } });
    /** Knot serves every seeded zone with the serial hostplane serves. */
    const knotFollows = async () => {
      for (const zone of [x.reseller.domain, x.end1.domain, x.end2.domain, x.solo.domain]) {
        const serial = await soaAt(t.dns!.port!, zone);
        expect(serial, zone).toEqual(expect.any(Number));
        await pollUntil(() => soaAt(knotPort(), zone), (s) => s === serial, `Knot serves ${zone} at serial ${serial}`, 20_000);
      }
    };

    beforeAll(async () => {
      ts = await freshStore(engine);
      databaseUrl = processUrl(ts);
      // A DNS server (127.0.0.1, a free port) and a worker, as `npm start` runs them.
      t = await createTestApp(engine, { DNS_SECONDARY_TIMEOUT_MS: '20000', DNS_HEARTBEAT_MS: '200', DNS_POLL_MS: '100' }, { store: ts, worker: true, dns: true });
      x = await seedTenants(t.admin);
      // mode 0700: the mail part's users cannot enter it, so up.sh leaves mail out.
      root = await fs.realpath(await fs.mkdtemp('/tmp/hp-knot-'));
      dir = path.join(root, 'stack');
      ({ run: up, base } = await upOnFreePorts(dir, env()));
    }, 120_000);
    afterAll(async () => {
      if (dir) await script(DOWN, [dir], { DATABASE_URL: databaseUrl }).catch(() => undefined);
      await t?.close();
      await ts?.drop();
      if (root) await fs.rm(root, { recursive: true, force: true });
    }, STEP_MS);

    it('up.sh starts Knot on port-base+16, registers it as DNS secondary "local-knot", names it in stack.json and prints how to ask it', async () => {
      expect(up.stderr).toBe('');
      expect(up.code).toBe(0);
      expect(up.stdout).toMatch(new RegExp(`^hostplane local stack in ${dir}; registered web server "local" in this store; registered DNS secondary "local-knot"\\.\n`));
      const stack = JSON.parse(await fs.readFile(path.join(dir, 'stack.json'), 'utf8'));
      keyName = stack.dns?.secondary?.tsig_key;
      expect(keyName).toMatch(/^local-knot-[0-9a-f]{8}$/);
      expect(stack.dns).toEqual({
        secondary: {
          name: 'local-knot',
          engine: 'knot',
          listen: `127.0.0.1:${knotPort()}`,
          primary: `127.0.0.1:${t.dns!.port}`,
          catalog_zone: 'catalog.hostplane.invalid',
          tsig_key: keyName,
          key_file: path.join(dir, 'dns/tsig.key'),
        },
      });
      expect(stack.mail).toBeUndefined();
      expect(up.stdout).toContain(`\n  Knot     DNS secondary "local-knot" on 127.0.0.1:${knotPort()} (pid `);
      expect(up.stdout).toContain(` DNS_LISTEN=127.0.0.1:${t.dns!.port} npm start\n`);
      expect(up.stdout).toContain(`\n  dig @127.0.0.1 -p ${knotPort()} <zone> SOA\n`);

      // The key in BIND format (what `dns-secondary add --tsig-key-file` reads), private.
      const keyFile = path.join(dir, 'dns/tsig.key');
      keyText = await fs.readFile(keyFile, 'utf8');
      const m = /^key "([^"]+)" \{\n\talgorithm hmac-sha256;\n\tsecret "([A-Za-z0-9+/]+=*)";\n\};\n$/.exec(keyText);
      expect(m?.[1]).toBe(keyName);
      expect(Buffer.from(m![2], 'base64')).toHaveLength(32);
      expect((await fs.stat(keyFile)).mode & 0o777).toBe(0o600);
      expect((await fs.stat(path.join(dir, 'dns/knot.conf'))).mode & 0o777).toBe(0o600);

      const pid = await pidIn(path.join(dir, 'dns/knot.pid'));
      expect(await alive(pid)).toBe(true);
      expect(path.basename(await argv0(pid))).toBe('knotd');
      expect(await secondaries()).toEqual([
        { id: expect.any(String), name: 'local-knot', address: `127.0.0.1:${knotPort()}`, tsig_key: keyName, algorithm: 'hmac-sha256', created_at: expect.any(String) },
      ]);
    }, STEP_MS);

    it('Knot serves the seeded zones (from the catalog) with hostplane\'s serials', async () => {
      expect(up.code).toBe(0);
      await knotFollows();
    }, STEP_MS);

    it('a DNS record POSTed through HTTP gets a job that is done, and Knot answers the record', async () => {
      const r = await postTxt('via-knot', 'served by the stack');
      expect(r.status, r.body).toBe(202);
      await jobDone(t, x.end1.token, r);
      // Done means every registered secondary serves it: Knot answers at once.
      expect(await txtAt(knotPort(), `via-knot.${x.end1.domain}`)).toEqual(['served by the stack']);
      expect(await txtAt(t.dns!.port!, `via-knot.${x.end1.domain}`)).toEqual(['served by the stack']);
    }, STEP_MS);

    it('down.sh removes the registration (from the store up.sh recorded) and stops Knot by its pid; DNS jobs no longer wait for it', async () => {
      const pid = await pidIn(path.join(dir, 'dns/knot.pid'));
      const caddyPid = await pidIn(path.join(dir, 'caddy/caddy.pid'));
      // No DATABASE_URL: down.sh takes the store from <dir>/dns/registration.json.
      const down = await script(DOWN, [dir], {});
      expect(down.stderr).toBe('');
      expect(down.code).toBe(0);
      expect(down.stdout.split('\n').sort()).toEqual(
        [
          '', 'down.sh: removed DNS secondary "local-knot" from the store.', `down.sh: stopped caddy (pid ${caddyPid}).`, `down.sh: stopped knotd (pid ${pid}).`,
          ...unregisterHint(databaseUrl, 'local').trimEnd().split('\n'),
        ].sort(),
      );
      expect(await alive(pid)).toBe(false);
      expect(await secondaries()).toEqual([]);
      expect(existsSync(path.join(dir, 'dns/registration.json'))).toBe(false);
      expect(existsSync(path.join(dir, 'dns/knot.pid'))).toBe(false);
      const r = await postTxt('after-down', 'hostplane alone');
      expect(r.status, r.body).toBe(202);
      await jobDone(t, x.end1.token, r);
    }, STEP_MS);

    it('up.sh again on the same dir keeps the key and registers Knot again; down.sh with a store it cannot reach says so, prints the command and stops Knot all the same', async () => {
      const again = await script(UP, [dir, String(base)], env());
      expect(again.stderr).toBe('');
      expect(again.code).toBe(0);
      expect(again.stdout).toMatch(/; registered DNS secondary "local-knot"\.\n/);
      expect(await fs.readFile(path.join(dir, 'dns/tsig.key'), 'utf8')).toBe(keyText);
      expect((await secondaries()).map((s) => [s.name, s.address, s.tsig_key])).toEqual([['local-knot', `127.0.0.1:${knotPort()}`, keyName]]);
      await knotFollows();
      expect(await txtAt(knotPort(), `after-down.${x.end1.domain}`)).toEqual(['hostplane alone']);

      const pid = await pidIn(path.join(dir, 'dns/knot.pid'));
      const unreachable = 'postgres://127.0.0.1:1/none';
      const down = await script(DOWN, [dir], { DATABASE_URL: unreachable });
      expect(down.code).toBe(1);
      expect(down.stdout).toContain(`down.sh: stopped knotd (pid ${pid}).\n`);
      expect(down.stderr).toContain('down.sh: could not reach the store to unregister it (the CLI said why above); DNS secondary "local-knot" stays registered');
      expect(down.stderr).toContain(`every DNS job fails after DNS_SECONDARY_TIMEOUT_MS while it is. Run:\n  DATABASE_URL=${unreachable} hostplane admin dns-secondary remove local-knot\n`);
      expect(await alive(pid)).toBe(false);
      expect((await secondaries()).map((s) => s.name)).toEqual(['local-knot']);

      // Once the store answers, down.sh removes it (nothing is left running).
      expect(await script(DOWN, [dir], {})).toEqual({
        code: 0,
        stdout: `down.sh: removed DNS secondary "local-knot" from the store.\ndown.sh: nothing was running in ${dir}.\n`,
        stderr: '',
      });
      expect(await secondaries()).toEqual([]);
    }, 2 * STEP_MS);
  });
});

describeKnotStack('the local stack\'s DNS secondary: refusals before anything starts', () => {
  it('Knot\'s port (port-base+16) in use: exit 1 naming it, nothing started', async () => {
    for (let attempt = 1; ; attempt++) {
      const base = await freeBase();
      const blocker = net.createServer();
      const listening = await new Promise<boolean>((resolve) => {
        blocker.once('error', () => resolve(false));
        blocker.listen(base + 16, '127.0.0.1', () => resolve(true));
      });
      if (!listening && attempt < 5) continue;
      try {
        const dir = path.join(await fs.realpath(await fs.mkdtemp('/tmp/hp-knot-')), 'stack');
        const run = await script(UP, [dir, String(base)], { DATABASE_URL: '/nonexistent/hostplane.db', STACK_DNS_SECONDARY: 'knot' });
        expect(run).toEqual({
          code: 1,
          stdout: '',
          stderr: `up.sh: port ${base + 16} on 127.0.0.1 is in use; the stack's DNS secondary (Knot) needs it: pick another port-base.\n`,
        });
        expect(existsSync(dir)).toBe(false);
        await fs.rm(path.dirname(dir), { recursive: true, force: true });
      } finally {
        await new Promise((resolve) => blocker.close(resolve));
      }
      return;
    }
  });

  it('an unknown STACK_DNS_SECONDARY or a HOSTPLANE_DNS off loopback: exit 1 saying what to set', async () => {
    const base = String(await freeBase());
    expect(await script(UP, ['/tmp/hp-knot-none', base], { DATABASE_URL: '/nonexistent/hostplane.db', STACK_DNS_SECONDARY: 'nsd' })).toEqual({
      code: 1,
      stdout: '',
      stderr: "up.sh: STACK_DNS_SECONDARY must be knot (or unset for no DNS secondary); got 'nsd'.\n",
    });
    expect(await script(UP, ['/tmp/hp-knot-none', base], { DATABASE_URL: '/nonexistent/hostplane.db', STACK_DNS_SECONDARY: 'knot', HOSTPLANE_DNS: '192.0.2.1:53' })).toEqual({
      code: 1,
      stdout: '',
      stderr: "up.sh: HOSTPLANE_DNS must be host:port of hostplane's DNS server (its DNS_LISTEN) on a loopback address, e.g. 127.0.0.1:5300; got '192.0.2.1:53'.\n",
    });
    expect(existsSync('/tmp/hp-knot-none')).toBe(false);
  });
});
