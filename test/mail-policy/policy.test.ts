// The mail policy service as Postfix's submission services see it (docs/decisions/0020-outbound-limits.md):
// the policy protocol over TCP, limits read from the store with a mail server's read-only access
// (a role that may read the mail directory alone on PostgreSQL, the file on SQLite), mailboxes
// made through the API. Under the limit DUNNO; the recipient past it deferred with a 4xx that names
// the mailbox and the limit; END-OF-MESSAGE counts what was accepted; other mailboxes and mail
// without a login are not touched; a changed plan setting applies from the next message.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, createTestApp, freshStore, type TestApp, type TestStore } from '../helpers/app.js';
import { placeholderMailServer, postEmail } from '../helpers/email.js';
import { PolicyClient, endOfMessage, mailServerStore, message, rcpt, recipients } from '../helpers/mail-policy.js';
import { seedTenants, type Tenants } from '../helpers/tenants.js';
import { MailLimitsRepository } from '../../src/mail-policy/limits.repository.js';
import { startMailPolicyServer, type MailPolicyServer } from '../../src/mail-policy/server.js';
import type { MailStore } from '../../src/node/render/index.js';

const deferred = (user: string, sent: number, plan = '(the limit of its plan)') =>
  `450 4.7.1 <${user}> has sent to ${sent} recipient${sent === 1 ? '' : 's'} in the last hour ${plan}; try again later`;

describe.each(ENGINES)('the mail policy service on %s', { timeout: 60_000 }, (engine) => {
  let ts: TestStore;
  let t: TestApp;
  let x: Tenants;
  let reader: { store: MailStore; drop(): Promise<void> };
  let limits: MailLimitsRepository;
  let server: MailPolicyServer;
  let c: PolicyClient;
  let n = 0;

  /** A new mailbox of end1 (its plan: x.resellerPlanId), through the API. */
  const mailbox = async (token = x.end1.token, domain = x.end1.domain) => {
    const r = await postEmail(t, token, { address: `sender${++n}@${domain}`, address_type: 'mailbox' });
    expect(r.status, r.body).toBe(202);
    return r.json.data.attributes.address_ace as string;
  };
  const setLimit = (planId: string, perHour: number) => t.admin.packages.setPlanRecipientsPerHour(Number(planId), perHour);

  beforeAll(async () => {
    ts = await freshStore(engine);
    t = await createTestApp(engine, {}, { store: ts });
    x = await seedTenants(t.admin);
    await placeholderMailServer(t.store);
    reader = await mailServerStore(ts);
    limits = MailLimitsRepository.open(reader.store, 'mx-test');
    server = await startMailPolicyServer({ host: '127.0.0.1', port: 0 }, limits, pino({ level: 'silent' }));
    c = await PolicyClient.connect(server.address.port);
  });
  afterAll(async () => {
    c?.close();
    await server?.close();
    await limits?.close();
    await reader?.drop();
    await t?.close();
    await ts?.drop();
  });

  it('a new mailbox gets its plan\'s 500; recipients up to it are DUNNO, the 501st within the hour is deferred naming the mailbox and the limit', async () => {
    const a = await mailbox();
    expect(await limits.recipientsPerHour(a)).toBe(500);
    // 5 messages of 100 recipients each: all accepted.
    for (let i = 0; i < 5; i++) expect(new Set(await message(c, a, recipients(100, `m${i}-`)))).toEqual(new Set(['DUNNO']));
    expect(await message(c, a, ['one-more@outside.example', 'and-another@outside.example'])).toEqual([deferred(a, 500), deferred(a, 500)]);
  });

  it('recipients count at RCPT: the message that crosses the limit gets DUNNO up to it and a defer after it; END-OF-MESSAGE commits what was accepted', async () => {
    await setLimit(x.resellerPlanId, 5);
    const a = await mailbox();
    const answers = await message(c, a, recipients(7));
    expect(answers).toEqual([...Array(5).fill('DUNNO'), deferred(a, 5), deferred(a, 5)]);
    // Its client retries the two later: still deferred, the five were committed.
    expect(await message(c, a, recipients(2, 'retry'))).toEqual([deferred(a, 5), deferred(a, 5)]);
  });

  it('END-OF-MESSAGE counts recipient_count, what Postfix accepted; a message abandoned before it counts nothing', async () => {
    await setLimit(x.resellerPlanId, 4);
    const a = await mailbox();
    // Three RCPTs asked, then the client gave up (RSET / a new message on the same connection): nothing was sent.
    for (const to of recipients(3, 'gone')) expect(await c.ask(rcpt(a, to, 'abandoned'))).toBe('DUNNO');
    // The next message may use all four.
    expect(await message(c, a, recipients(4, 'after'))).toEqual(Array(4).fill('DUNNO'));
    // END-OF-MESSAGE with fewer accepted than asked (a later restriction refused one): only those count.
    await setLimit(x.resellerPlanId, 6);
    const b = await mailbox();
    for (const to of recipients(3, 'b')) expect(await c.ask(rcpt(b, to, 'b-1'))).toBe('DUNNO');
    expect(await c.ask(endOfMessage(b, 2, 'b-1'))).toBe('DUNNO');
    expect(await message(c, b, recipients(5, 'b2'))).toEqual([...Array(4).fill('DUNNO'), deferred(b, 6)]);
  });

  it('a message open on another connection (another smtpd process) counts too', async () => {
    await setLimit(x.resellerPlanId, 3);
    const a = await mailbox();
    const other = await PolicyClient.connect(server.address.port);
    try {
      expect(await other.ask(rcpt(a, 'x1@outside.example', 'o-1'))).toBe('DUNNO');
      expect(await other.ask(rcpt(a, 'x2@outside.example', 'o-1'))).toBe('DUNNO');
      expect(await message(c, a, recipients(2, 'here'))).toEqual(['DUNNO', deferred(a, 3)]);
    } finally {
      other.close();
    }
  });

  it('another mailbox, of the same package or another customer, has its own count', async () => {
    await setLimit(x.resellerPlanId, 2);
    const a = await mailbox();
    const b = await mailbox();
    const solo = await mailbox(x.solo.token, x.solo.domain);
    expect(await message(c, a, recipients(3))).toEqual(['DUNNO', 'DUNNO', deferred(a, 2)]);
    expect(await message(c, b, recipients(2))).toEqual(['DUNNO', 'DUNNO']);
    // solo's plan still has the default.
    expect(await message(c, solo, recipients(3))).toEqual(['DUNNO', 'DUNNO', 'DUNNO']);
  });

  it('mail without a login (port 25) and requests of other states or kinds are answered DUNNO, whatever the counts', async () => {
    await setLimit(x.resellerPlanId, 1);
    const a = await mailbox();
    expect(await message(c, a, recipients(2))).toEqual(['DUNNO', deferred(a, 1)]);
    // The same mailbox as a recipient of inbound mail, many times: never limited.
    expect(await message(c, null, Array(5).fill(a))).toEqual(Array(5).fill('DUNNO'));
    expect(await c.ask({ ...rcpt(a, 'z@outside.example', 'state'), protocol_state: 'MAIL' })).toBe('DUNNO');
    expect(await c.ask({ ...rcpt(a, 'z@outside.example', 'kind'), request: 'something_else' })).toBe('DUNNO');
  });

  it('the limit is read from the store for each message: a lower or higher plan setting applies from the next message on', async () => {
    await setLimit(x.resellerPlanId, 10);
    const a = await mailbox();
    expect(await message(c, a, recipients(4))).toEqual(Array(4).fill('DUNNO'));
    await setLimit(x.resellerPlanId, 3);
    expect(await message(c, a, recipients(1))).toEqual([deferred(a, 4, "(its plan's limit is 3)")]);
    await setLimit(x.resellerPlanId, 6);
    expect(await message(c, a, recipients(3))).toEqual(['DUNNO', 'DUNNO', deferred(a, 6)]);
  });

  it('a package moved to another plan takes that plan\'s limit at once', async () => {
    await setLimit(x.resellerPlanId, 1);
    const a = await mailbox();
    const { planId } = await t.admin.packages.createPlan({ name: 'bigger', recipientsPerHour: 3 });
    await t.admin.packages.setPackagePlan(Number(x.end1.packageId), planId);
    try {
      expect(await message(c, a, recipients(4))).toEqual(['DUNNO', 'DUNNO', 'DUNNO', deferred(a, 3)]);
    } finally {
      await t.admin.packages.setPackagePlan(Number(x.end1.packageId), Number(x.resellerPlanId));
    }
  });

  it('a login that is no active mailbox of this server (deleted meanwhile) is deferred, never let through', async () => {
    expect(await c.ask(rcpt('nobody@end1.example', 'x@outside.example', 'nobody'))).toBe('450 4.7.1 <nobody@end1.example> is no active mailbox of this server; try again later');
  });

  it('a request that breaks the protocol closes only its connection', async () => {
    const bad = await PolicyClient.connect(server.address.port);
    await expect(bad.ask({ 'no equals sign here\nrequest': 'x' })).rejects.toThrow('closed the connection');
    expect(await c.ask(rcpt(null, 'x@outside.example', 'still'))).toBe('DUNNO');
  });
});
