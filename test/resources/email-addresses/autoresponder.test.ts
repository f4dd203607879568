// The autoresponder's dates through the API on both engines (API guide "E-mail addresses";
// docs/decisions/0011-antispam-and-autoresponder.md, the API side): `activates` switches it on and
// `expires` off at 00:00 Europe/Berlin of the date, DST-correct, and a reached date is cleared. The
// scheduled turn (autoresponderTurn) is run with a clock standing on either side of a midnight —
// winter, summer, the last Sunday of March (the night of 23 hours) and of October (25 hours) — and
// GET shows what a client sees.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, call, createTestApp, type TestApp } from '../../helpers/app.js';
import { seedTenants, type Tenants } from '../../helpers/tenants.js';
import { patchEmail, placeholderMailServer, postEmail } from '../../helpers/email.js';
import { createHash } from 'node:crypto';
import { autoresponderTurn, writeMissingScripts } from '../../../src/resources/email-addresses/email-addresses.autoresponder.js';
import { MailDirectoryRepository } from '../../../src/resources/email-addresses/email-addresses.mail-directory.repository.js';
import { sieveScript } from '../../../src/resources/email-addresses/email-addresses.sieve.js';
import { buildJobs } from '../../../src/resources/jobs.js';

describe.each(ENGINES)('autoresponder dates on %s', { timeout: 60_000 }, (engine) => {
  let t: TestApp;
  let x: Tenants;
  let n = 0;
  beforeAll(async () => {
    t = await createTestApp(engine);
    x = await seedTenants(t.admin);
    await placeholderMailServer(t.store);
  });
  afterAll(async () => {
    await t?.close();
  });

  const token = () => x.end1.token;
  const mailbox = async (autoresponder: Array<Record<string, unknown>>) => {
    const r = await postEmail(t, token(), { address: `away${++n}@${x.end1.domain}`, address_type: 'mailbox' });
    for (const key of autoresponder) expect((await patchEmail(t, token(), r.json.data.id, { autoresponder: key })).status).toBe(200);
    return r.json.data.id as string;
  };
  const state = async (id: string) => (await call(t.app, 'GET', `/email-addresses/${id}`, { token: token() })).json.data.attributes.autoresponder;
  const at = (iso: string) => autoresponderTurn(t.store, new Date(iso));

  // [the date, the last instant before 00:00 Berlin, 00:00 Berlin in UTC]
  const MIDNIGHTS: Array<[string, string, string, string]> = [
    ['winter (UTC+1)', '2027-01-15', '2027-01-14T22:59:59.999Z', '2027-01-14T23:00:00.000Z'],
    ['summer (UTC+2)', '2027-07-15', '2027-07-14T21:59:59.999Z', '2027-07-14T22:00:00.000Z'],
    ['last Sunday of March (clocks go forward that night at 02:00)', '2027-03-28', '2027-03-27T22:59:59.999Z', '2027-03-27T23:00:00.000Z'],
    ['the day after it (first midnight of summer time)', '2027-03-29', '2027-03-28T21:59:59.999Z', '2027-03-28T22:00:00.000Z'],
    ['last Sunday of October (clocks go back that night at 03:00)', '2027-10-31', '2027-10-30T21:59:59.999Z', '2027-10-30T22:00:00.000Z'],
    ['the day after it (first midnight of winter time)', '2027-11-01', '2027-10-31T22:59:59.999Z', '2027-10-31T23:00:00.000Z'],
  ];

  for (const [what, date, before, midnight] of MIDNIGHTS) {
    it(`activates ${date}, ${what}: off until 00:00 Berlin, then on with the date cleared (API guide "E-mail addresses")`, async () => {
      const id = await mailbox([{ text: 'Back soon.' }, { activates: date }]);
      await at(before);
      expect(await state(id)).toEqual({ text: 'Back soon.', active: false, activates: date, expires: null });
      await at(midnight);
      expect(await state(id)).toEqual({ text: 'Back soon.', active: true, activates: null, expires: null });
    });

    it(`expires ${date}, ${what}: on until 00:00 Berlin, then off with the date cleared (API guide "E-mail addresses")`, async () => {
      const id = await mailbox([{ text: 'Away.' }, { active: true }, { expires: date }]);
      await at(before);
      expect(await state(id)).toEqual({ text: 'Away.', active: true, activates: null, expires: date });
      await at(midnight);
      expect(await state(id)).toEqual({ text: 'Away.', active: false, activates: null, expires: null });
    });
  }

  it('both dates reached in one turn (the workers were down): it ends off, both cleared; a later turn changes nothing', async () => {
    const id = await mailbox([{ activates: '2027-02-01' }, { expires: '2027-02-03' }]);
    const turn = await at('2027-02-10T12:00:00Z');
    expect(turn.activated).toBeGreaterThanOrEqual(1);
    expect(await state(id)).toEqual({ text: '', active: false, activates: null, expires: null });
    await patchEmail(t, token(), id, { autoresponder: { active: true } });
    await at('2027-02-11T12:00:00Z');
    expect((await state(id)).active).toBe(true);
  });

  it('between the two dates it is on; at expires it goes off', async () => {
    const id = await mailbox([{ activates: '2027-05-01' }, { expires: '2027-05-08' }]);
    await at('2027-05-03T10:00:00Z');
    expect(await state(id)).toEqual({ text: '', active: true, activates: null, expires: '2027-05-08' });
    await at('2027-05-07T22:00:00Z');
    expect(await state(id)).toEqual({ text: '', active: false, activates: null, expires: null });
  });

  it('the workers run the turn every minute as a scheduled job nobody lists', () => {
    const scheduled = buildJobs().scheduled().find((s) => s.name === 'email-address:schedule');
    expect(scheduled?.definition.every).toBe(60_000);
  });

  describe('the mailbox\'s Sieve script in the mail directory (docs/decisions/0011-antispam-and-autoresponder.md)', () => {
    const script = async (id: string) => {
      const address = (await call(t.app, 'GET', `/email-addresses/${id}`, { token: token() })).json.data.attributes.address_ace as string;
      return t.store.db.selectFrom('mail_sieve').select(['name', 'id', 'script', 'server']).where('address', '=', address).execute();
    };

    it('POST and every PATCH of antispam or the autoresponder write it at commit; its id is the SHA-256 of its text', async () => {
      const r = await postEmail(t, token(), { address: `sieve${++n}@${x.end1.domain}`, address_type: 'mailbox', antispam: 'junk-folder' });
      const id = r.json.data.id as string;
      const [junk] = await script(id);
      expect(junk).toEqual({ name: 'active', id: createHash('sha256').update(junk.script).digest('hex'), script: sieveScript({ antispam: 'junk-folder', autoresponder: { text: '', active: false, activates: null, expires: null } }), server: 'mx-test' });
      await patchEmail(t, token(), id, { antispam: 'none' });
      const [none] = await script(id);
      expect(none.script).toContain('deleteheader "X-Spam"');
      // A text alone replies to nothing: the same script.
      await patchEmail(t, token(), id, { autoresponder: { text: 'Away.' } });
      expect(await script(id)).toEqual([none]);
      await patchEmail(t, token(), id, { autoresponder: { active: true } });
      const [on] = await script(id);
      expect(on.script).toContain('vacation :days 1 :handle "autoresponder" "Away.";');
      // A description changes no script.
      await patchEmail(t, token(), id, { description: 'x' });
      expect(await script(id)).toEqual([on]);
    });

    it('a forward has none; DELETE removes it with the mailbox', async () => {
      const f = await postEmail(t, token(), { address: `fw${++n}@${x.end1.domain}`, address_type: 'forward', forward_to: ['a@outside.example'], antispam: 'subject-rewrite' });
      expect(await script(f.json.data.id)).toEqual([]);
      const m = await postEmail(t, token(), { address: `gone${++n}@${x.end1.domain}`, address_type: 'mailbox' });
      const address = m.json.data.attributes.address_ace as string;
      await new MailDirectoryRepository(t.store.db).removeUser(address);
      expect(await t.store.db.selectFrom('mail_sieve').select('id').where('address', '=', address).execute()).toEqual([]);
    });

    it('the turn rewrites the scripts of the autoresponders it switched (the date guard goes)', async () => {
      const id = await mailbox([{ text: 'Later.' }, { activates: '2027-09-01' }]);
      const [before] = await script(id);
      expect(before.script).toContain('"ge" "iso8601" "2027-08-31T22:00:00Z"');
      await at('2027-09-01T00:00:00Z');
      const [after] = await script(id);
      expect(after.script).not.toContain('currentdate');
      expect(after.script).toContain('vacation');
    });

    it('mailboxes made before the scripts came in get theirs from the scheduled job, a batch at a time', async () => {
      const ids = [];
      for (const antispam of ['reject', 'junk-folder', 'none']) {
        ids.push((await postEmail(t, token(), { address: `old${++n}@${x.end1.domain}`, address_type: 'mailbox', antispam })).json.data.id as string);
      }
      const expected = await Promise.all(ids.map(script));
      expect(expected.map((rows) => rows.length)).toEqual([1, 1, 1]);
      await t.store.db.deleteFrom('mail_sieve').execute();
      let written = 0;
      for (let turn; (turn = await writeMissingScripts(t.store, 1)) > 0; ) written += turn;
      expect(written).toBeGreaterThanOrEqual(3);
      expect(await Promise.all(ids.map(script))).toEqual(expected);
      expect(await writeMissingScripts(t.store)).toBe(0);
    });
  });
});
