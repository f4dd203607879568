// The Sieve script of a mailbox (docs/decisions/0011-antispam-and-autoresponder.md,
// src/resources/email-addresses/sieve.ts): the exact text for each case, Berlin midnights as UTC
// instants across both DST changes, escaping, and every generated script compiled by Pigeonhole's
// sievec (skipped without it; CI has it).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { berlinMidnightUtc, sieveScript, type SieveInput } from '../../../src/resources/email-addresses/email-addresses.sieve.js';
import { requirable } from '../../helpers/required.js';

const off = { text: '', active: false, activates: null, expires: null };
const input = (antispam: SieveInput['antispam'], autoresponder: Partial<SieveInput['autoresponder']> = {}): SieveInput => ({ antispam, autoresponder: { ...off, ...autoresponder } });

describe('berlinMidnightUtc', () => {
  it.each([
    ['2027-01-15', '2027-01-14T23:00:00Z'],
    ['2027-07-15', '2027-07-14T22:00:00Z'],
    ['2027-03-28', '2027-03-27T23:00:00Z'], // last Sunday of March: still winter time at 00:00
    ['2027-03-29', '2027-03-28T22:00:00Z'],
    ['2027-10-31', '2027-10-30T22:00:00Z'], // last Sunday of October: still summer time at 00:00
    ['2027-11-01', '2027-10-31T23:00:00Z'],
    ['2028-02-29', '2028-02-28T23:00:00Z'],
  ])('%s → %s', (date, utc) => {
    expect(berlinMidnightUtc(date)).toBe(utc);
  });
});

describe('sieveScript', () => {
  it('none takes the spam mark off and keeps the message as it came', () => {
    expect(sieveScript(input('none'))).toBe('require ["editheader"];\nif header :is "X-Spam" "Yes" {\n  deleteheader "X-Spam";\n  stop;\n}\n');
    // On, but nothing to say; off and nothing scheduled: no reply.
    expect(sieveScript(input('none', { active: true }))).toBe(sieveScript(input('none')));
    expect(sieveScript(input('none', { text: 'Away.' }))).toBe(sieveScript(input('none')));
  });

  it('junk-folder and reject file marked spam into Junk and stop (reject: what another recipient\'s mode let through)', () => {
    const junk = 'require ["fileinto", "mailbox"];\nif header :is "X-Spam" "Yes" {\n  fileinto :create "Junk";\n  stop;\n}\n';
    expect(sieveScript(input('junk-folder'))).toBe(junk);
    expect(sieveScript(input('reject'))).toBe(junk);
  });

  it('subject-rewrite prefixes the subject of marked spam unless it has the prefix', () => {
    expect(sieveScript(input('subject-rewrite'))).toBe(
      'require ["editheader", "variables"];\nif header :is "X-Spam" "Yes" {\n  if not header :matches "Subject" "\\\\*\\\\*\\\\*SPAM\\\\*\\\\*\\\\* *" {\n' +
        '    set "subject" "";\n    if header :matches "Subject" "*" { set "subject" "${1}"; }\n    deleteheader "Subject";\n    addheader :last "Subject" "***SPAM*** ${subject}";\n  }\n  stop;\n}\n',
    );
  });

  it('an active autoresponder replies; its text is escaped; marked spam gets no reply', () => {
    expect(sieveScript(input('junk-folder', { text: 'Back on "Monday" \\ Montag.\nGrüße', active: true }))).toBe(
      'require ["fileinto", "mailbox", "vacation", "date", "relational"];\nif header :is "X-Spam" "Yes" {\n  fileinto :create "Junk";\n  stop;\n}\n' +
        'vacation :days 1 :handle "autoresponder" "Back on \\"Monday\\" \\\\ Montag.\nGrüße";\n',
    );
    expect(sieveScript(input('none', { text: 'Away.', active: true }))).toBe(
      'require ["editheader", "vacation", "date", "relational"];\nif header :is "X-Spam" "Yes" {\n  deleteheader "X-Spam";\n  stop;\n}\nvacation :days 1 :handle "autoresponder" "Away.";\n',
    );
  });

  it('dates become guards at 00:00 Berlin in UTC', () => {
    expect(sieveScript(input('none', { text: 'Away.', activates: '2027-03-28', expires: '2027-10-31' }))).toBe(
      'require ["editheader", "vacation", "date", "relational"];\nif header :is "X-Spam" "Yes" {\n  deleteheader "X-Spam";\n  stop;\n}\n' +
        'if allof (currentdate :zone "+0000" :value "ge" "iso8601" "2027-03-27T23:00:00Z",\n          currentdate :zone "+0000" :value "lt" "iso8601" "2027-10-30T22:00:00Z") {\n' +
        '  vacation :days 1 :handle "autoresponder" "Away.";\n}\n',
    );
    // Already on: only the end is guarded.
    expect(sieveScript(input('reject', { text: 'Away.', active: true, expires: '2027-01-15' }))).toContain('if currentdate :zone "+0000" :value "lt" "iso8601" "2027-01-14T23:00:00Z" {\n');
  });
});

const sievec = spawnSync('bash', ['-c', 'command -v sievec']).status === 0 ? null : 'sievec is not installed (Debian package dovecot-sieve)';
requirable(sievec)('every generated script compiles with Pigeonhole', () => {
  it('property: any mode, text, active flag and dates give a script sievec accepts', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'hostplane-sieve-'));
    try {
      const date = fc.date({ min: new Date('2027-01-01'), max: new Date('2030-12-31'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
      const cases = fc.sample(
        fc.record({
          antispam: fc.constantFrom('reject', 'junk-folder', 'subject-rewrite', 'none') as fc.Arbitrary<SieveInput['antispam']>,
          autoresponder: fc.record({ text: fc.string({ unit: 'grapheme', maxLength: 200 }), active: fc.boolean(), activates: fc.option(date, { nil: null }), expires: fc.option(date, { nil: null }) }),
        }),
        40,
      );
      let compiled = 0;
      for (const [i, c] of cases.entries()) {
        const script = sieveScript(c);
        const file = path.join(dir, `s${i}.sieve`);
        await fs.writeFile(file, script);
        const r = spawnSync('sievec', ['-x', '+editheader', file, path.join(dir, `s${i}.svbin`)], { encoding: 'utf8' });
        expect(r.status, `${script}\n${r.stderr}`).toBe(0);
        compiled++;
      }
      expect(compiled).toBe(40);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
