// The doveadm HTTP API over HTTPS as a node renders it (the facts' `tls`: `ssl = yes` on the
// listener, the certificate of IMAP), run by Dovecot 2.3 of this machine and 2.4 of Debian 13
// (test/helpers/private-dovecot.ts, trixie.ts): DoveadmClient trusting the certificate (`ca`) gets
// doveadm's command list and runs a command (POST); without that root, or in clear, nothing is
// answered; a wrong key is refused. Needs root and Dovecot (2.4: a Debian 13 root filesystem);
// skipped without, failed under CI_REQUIRE_ALL=1.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { requirable } from '../helpers/required.js';
import { privateDovecotMissing, startPrivateDovecot, type PrivateDovecot } from '../helpers/private-dovecot.js';
import { describeDovecot24, openTrixie, type Trixie } from '../helpers/trixie.js';
import { DoveadmClient, DoveadmError } from '../../src/provisioning/mail/doveadm.js';

const KEY = 'beef'.repeat(8);

/** What a call threw: its class, message and HTTP status. */
const failure = (p: Promise<unknown>) => p.then(() => null, (e: DoveadmError) => ({ error: e.constructor.name, message: e.message, status: e.status }));

function suite(version: '2.3' | '2.4') {
  let dovecot: PrivateDovecot;
  let trixie: Trixie | undefined;
  let origin: string;
  beforeAll(async () => {
    if (version === '2.4') trixie = await openTrixie();
    dovecot = await startPrivateDovecot({ key: KEY, tls: true, trixie });
    origin = dovecot.doveadmUrl;
  }, 180_000);
  afterAll(async () => {
    await dovecot?.stop();
    trixie?.close();
  }, 30_000);

  it('with the certificate trusted: the command list and a command (POST) are answered', async () => {
    const client = new DoveadmClient(origin, KEY, { ca: dovecot.ca!, timeoutMs: 10_000 });
    expect(origin).toMatch(/^https:\/\/localhost:\d+$/);
    expect(await client.commands()).toEqual(expect.arrayContaining(['user', 'kick', 'fsStat', 'fsDelete', 'quotaGet']));
    // A command about Dovecot itself: it needs no user, so no store.
    expect(await client.run('serviceStatus', { service: ['doveadm'] })).toEqual({ ok: true, data: [expect.objectContaining({ name: 'doveadm', listening: 'y' })] });
  });

  it("without that root (Node's own list), in clear, or with a wrong key: refused, and the key is in no message", async () => {
    const port = new URL(origin).port;
    expect(await failure(new DoveadmClient(origin, KEY, { timeoutMs: 10_000 }).commands())).toEqual({
      error: 'DoveadmError', message: `doveadm at ${origin} did not answer: self-signed certificate`, status: undefined,
    });
    // Dovecot closes a connection that does not begin TLS (at once, or resetting it).
    const plain = await failure(new DoveadmClient(`http://localhost:${port}`, KEY, { timeoutMs: 10_000 }).commands());
    expect(plain).toEqual({ error: 'DoveadmError', message: expect.stringMatching(new RegExp(`^doveadm at http://localhost:${port} did not answer: (socket hang up|read ECONNRESET)$`)), status: undefined });
    expect(await failure(new DoveadmClient(origin, `${KEY}x`, { ca: dovecot.ca!, timeoutMs: 10_000 }).commands())).toEqual({
      error: 'DoveadmError', message: `doveadm at ${origin} refused the API key (HTTP 401).`, status: 401,
    });
  });
}

requirable(privateDovecotMissing())("doveadm's HTTP API over HTTPS, Dovecot 2.3", () => suite('2.3'));
describeDovecot24("doveadm's HTTP API over HTTPS, Dovecot 2.4 (Debian 13)", () => suite('2.4'));
