// The parsers of panel logins, by property (API guide "Panel sessions (extension)"): the session
// cookie is found among any other cookies and nothing else is taken for it; base32 and recovery
// codes read back what was written; a TOTP code matches only its own step and the ones beside it.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sessionCookieOf } from '../../../src/auth/panel-session.js';
import { RECOVERY_CODE, base32, fromBase32, matchingStep, newRecoveryCodes, newTotpSecret, recoveryCodeOf, totpCode } from '../../../src/resources/session/session.totp.js';

const B64URL = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'];
const sessionValue = fc.array(fc.constantFrom(...B64URL), { minLength: 43, maxLength: 43 }).map((a) => a.join(''));
const otherCookie = fc
  .tuple(fc.stringMatching(/^[A-Za-z0-9_.-]{1,12}$/), fc.stringMatching(/^[^;]{0,20}$/))
  .filter(([name]) => name !== 'hostplane_session')
  .map(([name, value]) => `${name}=${value}`);

describe('the session cookie in a Cookie header', () => {
  it('is found wherever it stands among other cookies, spaces or none around the separators', () => {
    fc.assert(
      fc.property(sessionValue, fc.array(otherCookie, { maxLength: 5 }), fc.nat(), fc.constantFrom(';', '; ', ' ;  '), (value, others, at, sep) => {
        const parts = [...others];
        parts.splice(at % (others.length + 1), 0, `hostplane_session=${value}`);
        expect(sessionCookieOf(parts.join(sep))).toBe(value);
      }),
    );
  });

  it('is never taken from anything else: any header without a well-formed value answers undefined, and no header throws', () => {
    fc.assert(
      fc.property(fc.string(), (header) => {
        const found = sessionCookieOf(header);
        if (found !== undefined) expect(header).toContain(`hostplane_session=${found}`);
      }),
    );
    for (const header of [undefined, '', 'hostplane_session=', 'hostplane_session=short', `xhostplane_session=${'a'.repeat(43)}`, `hostplane_session=${'a'.repeat(44)}`, `hostplane_session=${'a'.repeat(42)}+`]) {
      expect(sessionCookieOf(header), String(header)).toBeUndefined();
    }
  });
});

describe('TOTP secrets, codes and recovery codes', () => {
  it('base32 reads back the bytes it wrote; a new secret is 32 characters of the base32 alphabet (160 bits)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 40 }), (bytes) => {
        expect([...fromBase32(base32(Buffer.from(bytes)))]).toEqual([...bytes]);
      }),
    );
    expect(newTotpSecret()).toMatch(/^[A-Z2-7]{32}$/);
  });

  it('a code matches within one step either side of now and names the earliest step it is; far steps never match (beyond a collision of codes)', () => {
    const secret = newTotpSecret();
    fc.assert(
      fc.property(fc.integer({ min: 1_000_000, max: 100_000_000 }), fc.integer({ min: -1, max: 1 }), (step, offset) => {
        const code = totpCode(secret, step + offset);
        const found = matchingStep(secret, code, step * 30_000 + 15_000);
        expect(found).not.toBeNull();
        expect(totpCode(secret, found!)).toBe(code);
        expect(found!).toBeLessThanOrEqual(step + offset);
        const far = totpCode(secret, step + 5);
        if (![-1, 0, 1].some((o) => totpCode(secret, step + o) === far)) expect(matchingStep(secret, far, step * 30_000)).toBeNull();
      }),
      { numRuns: 200 },
    );
    for (const bad of ['', '12345', '1234567', '12345a', ' 123456']) expect(matchingStep(secret, bad, Date.now()), bad).toBeNull();
  });

  it('recovery codes are ten distinct xxxxx-xxxxx codes; a code reads back in any letter case with spaces around, anything else does not', () => {
    const codes = newRecoveryCodes();
    expect(new Set(codes).size).toBe(10);
    for (const c of codes) {
      expect(c).toMatch(RECOVERY_CODE);
      expect(recoveryCodeOf(`  ${c.toUpperCase()} `)).toBe(c);
    }
    fc.assert(fc.property(fc.string(), (s) => {
      const r = recoveryCodeOf(s);
      if (r !== null) expect(r).toMatch(RECOVERY_CODE);
    }));
    for (const bad of ['abcde-fghi', 'abcdefghjk', 'abcde_fghjk', 'abcd0-fghjk']) expect(recoveryCodeOf(bad), bad).toBeNull();
  });
});
