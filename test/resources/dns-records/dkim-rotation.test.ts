// DKIM keys and their rotation (API guide "Sending mail"; docs/decisions/0021-dkim-signing.md), with
// the app's real DNS server and worker: `admin domain dkim-rotate` publishes a new selector; the key
// map a mail server signs from names it only once the DNS server answers its record; the old
// selector's record goes one TTL after the switch; a second rotation meanwhile is refused. The maps
// (signing table, key table) reach only the mail server of the domain's addresses.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mailReportKey } from '../../../src/provisioning/mail/servers.repository.js';
import { ENGINES, call, createTestApp, type TestApp } from '../../helpers/app.js';
import { ask } from '../../helpers/dns.js';
import { placeholderMailServer, postEmail } from '../../helpers/email.js';
import { seedTenants, type Tenants } from '../../helpers/tenants.js';
import { sleep } from '../../helpers/wait.js';

describe.each(ENGINES)('DKIM keys and rotation (%s)', (engine) => {
  let t: TestApp;
  let x: Tenants;
  const basic = (name: string, key: string) => ({ authorization: `Basic ${Buffer.from(`${name}:${key}`).toString('base64')}` });
  const mx = basic('mx-test', mailReportKey('not-used'));
  const map = async (which: 'signing' | 'keys', headers = mx) => {
    const r = await call(t.app, 'GET', `/internal/rspamd-dkim-${which}`, { headers });
    return { status: r.status, body: r.body };
  };
  /** The TXT data the DNS server answers at `name`, or null (NXDOMAIN or no TXT). */
  const served = async (name: string) => {
    const { p } = await ask(t.dns!.port!, 'udp', name, 'TXT');
    const txt = (p.answers ?? []).find((a) => a.type === 'TXT');
    return txt ? (txt.data as Buffer[]).map((b) => b.toString()).join('') : null;
  };
  const keyLine = async () => /^end1\.example end1\.example:([a-z0-9]+):([A-Za-z0-9+/=]+)$/m.exec((await map('keys')).body);

  beforeAll(async () => {
    t = await createTestApp(engine, { JOB_POLL_MS: '50' }, { worker: true, dns: true });
    x = await seedTenants(t.admin);
    await placeholderMailServer(t.store);
    // An address puts the domain on the mail server (its job waits for the unreachable server: no matter).
    expect((await postEmail(t, x.end1.token, { address: `info@end1.example`, address_type: 'forward', forward_to: ['a@outside.example'] })).status).toBe(202);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('the maps: the signing table and the key table of the server\'s domains, to that server alone', async () => {
    expect(await map('signing')).toEqual({ status: 200, body: '*@end1.example end1.example\n' });
    const line = await keyLine();
    expect(line?.[1]).toBe('default');
    // The key is the domain's, as PKCS#8 DER: it signs what the published record verifies.
    const key = crypto.createPrivateKey({ key: Buffer.from(line![2], 'base64'), format: 'der', type: 'pkcs8' });
    const txt = await served('default._domainkey.end1.example');
    const pub = crypto.createPublicKey({ key: Buffer.from(/p=([^;]+)/.exec(txt!)![1], 'base64'), format: 'der', type: 'spki' });
    expect(crypto.verify('sha256', Buffer.from('m'), pub, crypto.sign('sha256', Buffer.from('m'), key))).toBe(true);
    expect((await map('keys', basic('mx-test', 'wrong'))).status).toBe(401);
    expect((await map('keys', {} as never)).status).toBe(401);
  });

  it('dkim-rotate: the new selector signs only once served; the old record goes a TTL later; a second rotation meanwhile is refused', async () => {
    // The old record's TTL is what the retirement waits: one second here.
    await t.store.db.updateTable('dns_records').set({ ttl: 1 }).where('domain', '=', 'end1.example').where('name', '=', 'default._domainkey').execute();
    const { key, job } = await t.admin.dkim.rotate('end1.example');
    expect(key).toMatchObject({ domain: 'end1.example', state: 'publishing', selector: expect.stringMatching(/^hp\d{8}[0-9a-f]{6}$/) });
    await expect(t.admin.dkim.rotate('end1.example')).rejects.toMatchObject({ code: 'conflict' });
    const newName = `${key.selector}._domainkey.end1.example`;
    // Until the job is done: whenever the key map names the new selector, the DNS server answers it.
    let sawNew = false;
    for (let i = 0; i < 400; i++) {
      const line = await keyLine();
      if (line?.[1] === key.selector) {
        expect(await served(newName)).toMatch(/^v=DKIM1; k=rsa; p=/);
        sawNew = true;
      }
      const row = await t.store.db.selectFrom('queue_jobs').select(['status', 'error']).where('id', '=', job.id).executeTakeFirstOrThrow();
      if (row.status !== 'pending') {
        expect(row).toEqual({ status: 'done', error: null });
        break;
      }
      await sleep(25);
    }
    expect(sawNew || (await keyLine())?.[1] === key.selector).toBe(true);
    expect((await t.admin.dkim.keys('end1.example')).map((k) => [k.selector, k.state])).toEqual([[key.selector, 'signing']]);
    expect(await served('default._domainkey.end1.example')).toBeNull();
    expect(await served(newName)).toMatch(/^v=DKIM1; k=rsa; p=/);
    // The managed record stays undeletable through the API.
    const records = (await call(t.app, 'GET', '/dns-records?filter[domain]=end1.example', { token: x.end1.token })).json.data;
    const managed = records.find((r: { attributes: { name: string } }) => r.attributes.name === `${key.selector}._domainkey`);
    expect((await call(t.app, 'DELETE', `/dns-records/${managed.id}`, { token: x.end1.token })).status).toBe(403);
  });

  it('dkim-unsigned: a domain whose key has no published record is reported; rotating a domain without presence is refused', async () => {
    expect(await t.admin.dkim.unsigned()).toEqual([]);
    await t.store.db.updateTable('dns_records').set({ state: 'pending' }).where('domain', '=', 'end1.example').where('name', 'like', '%._domainkey').execute();
    expect(await t.admin.dkim.unsigned()).toEqual([{ domain: 'end1.example', reason: 'record-missing' }]);
    expect(await map('signing')).toEqual({ status: 200, body: '# none\n' });
    await t.store.db.updateTable('dns_records').set({ state: 'active' }).where('domain', '=', 'end1.example').where('name', 'like', '%._domainkey').execute();
    await expect(t.admin.dkim.rotate('nowhere.example')).rejects.toMatchObject({ code: 'resource_not_found' });
  });
});
