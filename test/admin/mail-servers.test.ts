// MailServersService.setDoveadm and doveadmMatches (src/admin/mail-servers.service.ts), and the
// registration `node setup --roles mail` converges with them (registerMailServer), on each engine
// against two real doveadm HTTP APIs of this machine's Dovecot 2.3 (test/helpers/private-dovecot.ts):
// an older node's, in clear with key A, and a node's over HTTPS with key B. A registration moves to
// the new URL and key only after that doveadm answered with them; a refused key, an untrusted
// certificate, bad input or an unknown name change nothing. Needs root and Dovecot 2.3; skipped
// without, failed under CI_REQUIRE_ALL=1.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, freshStore, processUrl, type TestStore } from '../helpers/app.js';
import { requirable } from '../helpers/required.js';
import { privateDovecotMissing, startPrivateDovecot, type PrivateDovecot } from '../helpers/private-dovecot.js';
import { MailServersService } from '../../src/admin/mail-servers.service.js';
import { AppError } from '../../src/errors.js';
import { registerMailServer } from '../../src/node/roles/mail.js';
import { MailServersRepository } from '../../src/provisioning/mail/servers.repository.js';

const KEY_A = 'a0'.repeat(16);
const KEY_B = 'b1'.repeat(16);

/** What a call threw, as the CLI and node setup show it: its code and message. */
const refusal = (p: Promise<unknown>) => p.then(() => null, (e: AppError) => ({ error: e.constructor.name, code: e.code, message: e.message }));

requirable(privateDovecotMissing())('mail servers: a registration moved to another doveadm URL or key', () => {
  let plain: PrivateDovecot;
  let tls: PrivateDovecot;
  beforeAll(async () => {
    [plain, tls] = await Promise.all([startPrivateDovecot({ key: KEY_A, tls: false }), startPrivateDovecot({ key: KEY_B, tls: true })]);
  }, 60_000);
  afterAll(() => Promise.all([plain?.stop(), tls?.stop()]), 30_000);

  describe.each(ENGINES)('on %s', (engine) => {
    let ts: TestStore;
    let servers: MailServersService;
    const row = (name: string) => new MailServersRepository(ts.store.db).byName(name);
    const view = (over: Record<string, unknown> = {}) => ({
      id: expect.stringMatching(/^[1-9][0-9]*$/),
      name: 'mx1',
      doveadm_url: plain.doveadmUrl,
      smtp: 'mx1.example.net:25',
      imap: 'mx1.example.net:993',
      default: true,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      ...over,
    });

    beforeAll(async () => {
      ts = await freshStore(engine);
      // node setup trusts the system's roots; here the roots are the HTTPS doveadm's certificate.
      servers = new MailServersService(ts.store.db, { ca: tls.ca!, timeoutMs: 10_000 });
      expect(await servers.add({ name: 'mx1', doveadmUrl: plain.doveadmUrl, doveadmKey: KEY_A, smtp: 'mx1.example.net:25', imap: 'mx1.example.net:993' })).toEqual(view());
    }, 30_000);
    afterAll(() => ts?.drop());

    it('doveadmMatches: true for the URL and key stored (as add stores them), false when either differs', async () => {
      const cases: [string, string, boolean][] = [
        [plain.doveadmUrl, KEY_A, true],
        [`${plain.doveadmUrl}/`, ` ${KEY_A}\n`, true],
        [plain.doveadmUrl, KEY_B, false],
        [plain.doveadmUrl, `${KEY_A}0`, false],
        [tls.doveadmUrl, KEY_A, false],
        [plain.doveadmUrl.replace('http:', 'https:'), KEY_A, false],
      ];
      const answers = await Promise.all(cases.map(([doveadmUrl, doveadmKey]) => servers.doveadmMatches('mx1', { doveadmUrl, doveadmKey })));
      expect(answers).toEqual(cases.map((c) => c[2]));
    });

    it('a key or certificate that doveadm or TLS refuses, bad input, an unknown name: refused, and nothing changes', async () => {
      const before = await row('mx1');
      const untrusting = new MailServersService(ts.store.db, { timeoutMs: 10_000 });
      const cases: [() => Promise<unknown>, string, string][] = [
        [() => servers.setDoveadm('mx1', { doveadmUrl: tls.doveadmUrl, doveadmKey: KEY_A }), 'invalid_api_data',
          `doveadm at ${tls.doveadmUrl} refused the key from --doveadm-key-file (HTTP 401): give the file holding that Dovecot's doveadm_api_key.`],
        [() => untrusting.setDoveadm('mx1', { doveadmUrl: tls.doveadmUrl, doveadmKey: KEY_B }), 'service_unavailable',
          `Cannot register the mail server: doveadm at ${tls.doveadmUrl} did not answer: self-signed certificate`],
        [() => servers.setDoveadm('mx1', { doveadmUrl: `${tls.doveadmUrl}/doveadm/v1`, doveadmKey: KEY_B }), 'invalid_api_data',
          `--doveadm-url must be http://host:port (or https://) of the doveadm HTTP API, without a path, e.g. http://127.0.0.1:8080; got "${tls.doveadmUrl}/doveadm/v1".`],
        [() => servers.setDoveadm('mx1', { doveadmUrl: tls.doveadmUrl, doveadmKey: ' \n' }), 'invalid_api_data', 'The doveadm key file is empty: it must hold the doveadm_api_key of that Dovecot.'],
        [() => servers.setDoveadm('mx9', { doveadmUrl: tls.doveadmUrl, doveadmKey: KEY_B }), 'resource_not_found', 'No mail server is named "mx9".'],
        [() => servers.doveadmMatches('mx9', { doveadmUrl: tls.doveadmUrl, doveadmKey: KEY_B }), 'resource_not_found', 'No mail server is named "mx9".'],
      ];
      for (const [call, code, message] of cases) expect(await refusal(call())).toEqual({ error: 'AppError', code, message });
      expect(await row('mx1')).toEqual(before);
      expect(await servers.list()).toEqual([view()]);
    });

    it('setDoveadm moves the registration to the HTTPS doveadm and its key once that answered; a second call changes nothing', async () => {
      const before = await row('mx1');
      const moved = view({ doveadm_url: tls.doveadmUrl });
      expect(await servers.setDoveadm('mx1', { doveadmUrl: `${tls.doveadmUrl}/`, doveadmKey: `${KEY_B}\n` })).toEqual(moved);
      expect(await row('mx1')).toEqual({ ...before, doveadm_url: tls.doveadmUrl, doveadm_key: KEY_B });
      expect(await servers.list()).toEqual([moved]);
      expect(await servers.doveadmMatches('mx1', { doveadmUrl: tls.doveadmUrl, doveadmKey: KEY_B })).toBe(true);
      expect(await servers.doveadmMatches('mx1', { doveadmUrl: plain.doveadmUrl, doveadmKey: KEY_A })).toBe(false);
      expect(await servers.setDoveadm('mx1', { doveadmUrl: tls.doveadmUrl, doveadmKey: KEY_B })).toEqual(moved);
      expect(await row('mx1')).toEqual({ ...before, doveadm_url: tls.doveadmUrl, doveadm_key: KEY_B });
    });

    it("node setup's registration: registered, then unchanged, then moved to the HTTPS doveadm and its key, then unchanged", async () => {
      const node = await freshStore(engine);
      try {
        const ctx = { name: 'mx1.example.net', shortName: 'mx1', store: processUrl(node) };
        const said: string[] = [];
        const register = (doveadmUrl: string, doveadmKey: string) => registerMailServer(ctx, { doveadmUrl, doveadmKey, ca: tls.ca! }, (line) => said.push(line));
        await register(plain.doveadmUrl, KEY_A);
        await register(plain.doveadmUrl, KEY_A);
        await register(tls.doveadmUrl, KEY_B);
        await register(tls.doveadmUrl, KEY_B);
        expect(said).toEqual([
          'registered mail server mx1 (smtp mx1.example.net:25, imap mx1.example.net:993)',
          'mail server mx1 is registered already',
          `updated mail server mx1 (doveadm ${tls.doveadmUrl})`,
          'mail server mx1 is registered already',
        ]);
        expect(await new MailServersService(node.store.db).list()).toEqual([view({ doveadm_url: tls.doveadmUrl })]);
        expect((await new MailServersRepository(node.store.db).byName('mx1'))?.doveadm_key).toBe(KEY_B);
      } finally {
        await node.drop();
      }
    });
  });
});
