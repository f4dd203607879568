// The password rules and the generator (API guide "Password rules", "Errors", "E-mail addresses"):
// each rule fails alone with its own problem, a good password passes, the problems answer as 422
// invalid_password error objects pointing at the password, the literal passwords of the docs are
// all listed, and (fast-check) generated passwords always pass while passwords made to contain the
// user name, the domain, a brand word, a keyboard run or an ordered run — in any case, with
// substitutions, reversed, inside good random text — never do.
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LinkBuilder } from '../../src/jsonapi/document.js';
import { registerJsonApi, trackRoutes } from '../../src/jsonapi/plugin.js';
import { DOCUMENTED_PASSWORDS } from '../../src/security/documented-passwords.js';
import { GENERATED_ALPHABET, GENERATED_LENGTH, generatePassword } from '../../src/security/password-generator.js';
import {
  checkPassword,
  loadPasswordDictionaries,
  passwordErrors,
  type PasswordContext,
  type PasswordRule,
} from '../../src/security/password-policy.js';
import { BASE, call } from '../helpers/app.js';

const ANY_FORM = 'not even in other letter case, reversed, or with digits or symbols in place of letters';
/** The details a user reads, written out here so that a change to them is a visible change. */
const DETAIL: Record<Exclude<PasswordRule, 'brand'>, string> = {
  length: 'The password must be at least 16 characters long.',
  distinct: 'The password must contain at least 10 different characters; the upper and lower case of a letter count as one.',
  characters:
    'The password may contain only the letters A-Z and a-z (no umlauts or other accented letters), the digits 0-9, ' +
    'spaces and these special characters: !"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~',
  user_name: `The password must not contain the user name, the mailbox address or a part of its name, ${ANY_FORM}.`,
  domain: `The password must not contain the domain name or any part of it of 3 or more characters, ${ANY_FORM}.`,
  password_word: `The password must not contain password, passwort or kennwort, ${ANY_FORM}.`,
  documented: 'The password contains a password shown as an example in our documentation; choose one of your own.',
  keyboard: 'The password must not contain 4 or more neighbouring keys of a keyboard row, in either direction (such as qwer or 0987).',
  sequence: 'The password must not contain 4 or more letters or digits in alphabetical or numerical order, forwards or backwards (such as abcd or 4321).',
  leaked: 'The password is a commonly used password or a dictionary word, as found in lists of leaked passwords; choose one that is not.',
};
const brandDetail = (words: string) => `The password must not contain the name of the service or its abbreviations (${words}), ${ANY_FORM}.`;

const CTX: PasswordContext = { userName: 'erika.mustermann@bücher-shop.example', brandWords: ['hostplane', 'HP '] };
/** Passes every rule for CTX: 16 characters, 16 different ones, nothing in a row. */
const GOOD = 'Vq7#mZ2!xB9?kR4&';
const problem = (rule: PasswordRule) => [{ rule, detail: rule === 'brand' ? brandDetail('hostplane, hp') : DETAIL[rule] }];

beforeAll(() => loadPasswordDictionaries());

describe('password rules (API guide "Password rules"): each one fails alone, with its own problem', () => {
  it('a password breaking no rule passes: no problems', () => {
    expect(checkPassword(GOOD, CTX)).toEqual([]);
    expect(checkPassword('Tq9 Wx2! Lm5? Ry8&', CTX)).toEqual([]);
    expect(checkPassword('"Vq7\'mZ2(xB9)kR4*`~|{}[]^_/\\:;<=>.,+-%', CTX)).toEqual([]);
    // Without a user name or domain only the other rules apply.
    expect(checkPassword(`${GOOD}mustermann`, { brandWords: [] })).toEqual([]);
  });

  it('length: 15 characters → length; 16 pass', () => {
    expect(checkPassword(GOOD.slice(0, 15), CTX)).toEqual(problem('length'));
    expect(checkPassword(GOOD, CTX)).toEqual([]);
  });

  it('distinct: 9 different characters (upper and lower case count as one) → distinct', () => {
    expect(checkPassword('Vq7#mZ2!xVq7#mZ2!xVQ', CTX)).toEqual(problem('distinct'));
    expect(checkPassword('Vq7#mZ2!xvQ7#Mz2!Xvq', CTX)).toEqual(problem('distinct'));
    expect(checkPassword('Vq7#mZ2!xB-q7#mZ2!xB', CTX)).toEqual([]);
  });

  it.each([
    ['an umlaut', `${GOOD}ä`],
    ['an accented letter', `${GOOD}é`],
    ['a tab', `${GOOD}\t`],
    ['a line feed', `${GOOD}\n`],
    ['an emoji', `${GOOD}😀`],
    ['a non-breaking space', `${GOOD}\u00a0`],
    ['a § sign', `${GOOD}§`],
  ])('characters: %s → characters', (_what, password) => {
    expect(checkPassword(password, CTX)).toEqual(problem('characters'));
  });

  it.each([
    ['the local part', 'erika.mustermann'],
    ['the whole address', 'Erika.Mustermann@Buecher-Shop.example'],
    ['a part of the local part, upper case', 'MUSTERMANN'],
    ['the other part, substituted', '3r1k4'],
    ['the local part without its dot', 'erikamustermann'],
    ['a part, reversed', 'nnamretsum'],
    ['a part, reversed and substituted', 'nn4mr37$um'],
  ])('user_name: %s → user_name', (_what, part) => {
    const ctx = { ...CTX, userName: 'erika.mustermann@buecher-shop.example', domain: 'other.test' };
    expect(checkPassword(`${GOOD}${part}`, ctx)).toEqual(problem('user_name'));
  });

  it('user_name: a bare user name (no @) and its parts count too; parts under 3 characters do not', () => {
    expect(checkPassword(`${GOOD}k0n70`, { userName: 'konto_7', brandWords: [] })).toEqual(problem('user_name'));
    expect(checkPassword(`${GOOD}jo`, { userName: 'jo.ann@x.example', domain: 'x.example', brandWords: [] })).toEqual([]);
    expect(checkPassword(`${GOOD}ann`, { userName: 'jo.ann@x.example', domain: 'x.example', brandWords: [] })).toEqual(problem('user_name'));
  });

  it.each([
    ['the domain', 'bucher-shop.example'],
    ['a label, upper case', 'EXAMPLE'],
    ['a hyphenated part of a label', 'Shop'],
    ['a Unicode label typed without the umlaut', 'bucher'],
    ['a label without its hyphen', 'buchershop'],
    ['the ACE label', 'xn--bcher-shop-9db'],
    ['a label, reversed and substituted', '3lpm4x3'],
  ])('domain: %s → domain', (_what, part) => {
    const ctx = { userName: 'erika', domain: 'bücher-shop.example', brandWords: CTX.brandWords };
    expect(checkPassword(`${GOOD}${part}`, ctx)).toEqual(problem('domain'));
  });

  it('domain: without ctx.domain the domain of the address is used; labels under 3 characters are not looked for', () => {
    expect(checkPassword(`${GOOD}Sh0p`, { userName: 'erika@shop.de', brandWords: [] })).toEqual(problem('domain'));
    expect(checkPassword(`${GOOD}de`, { userName: 'erika@shop.de', brandWords: [] })).toEqual([]);
  });

  it.each([['hostplane'], ['HostPlane'], ['h0$7pl4n3'], ['enalptsoh'], ['HP'], ['ph']])('brand: %s → brand, naming the brand words', (word) => {
    expect(checkPassword(`${GOOD}${word}`, CTX)).toEqual(problem('brand'));
  });

  it.each([['password'], ['PassWort'], ['k3nnw0r7'], ['drowssap'], ['TROWSSAP']])('password_word: %s → password_word', (word) => {
    expect(checkPassword(`${GOOD}${word}`, CTX)).toEqual(problem('password_word'));
  });

  it('documented: a password shown in our docs, as is, in other case, reversed or inside a longer one → documented', () => {
    const shown = DOCUMENTED_PASSWORDS[0];
    expect(checkPassword(shown, CTX)).toEqual(problem('documented'));
    expect(checkPassword(shown.toUpperCase(), CTX)).toEqual(problem('documented'));
    expect(checkPassword([...shown].reverse().join(''), CTX)).toEqual(problem('documented'));
    expect(checkPassword(`x${shown}!`, CTX)).toEqual(problem('documented'));
  });

  it.each([
    ['a QWERTY letter row', 'asdf'],
    ['a row right to left, upper case', 'POIU'],
    ['the bottom row', 'zxcv'],
    ['a QWERTZ row (z between t and u)', 'tzui'],
    ['the QWERTZ bottom row', 'yxcv'],
    ['shifted number keys', '!@#$'],
    ['a substituted row', 'qw3r'],
    ['symbols of a row', 'op[]'],
  ])('keyboard: %s → keyboard', (_what, run) => {
    expect(checkPassword(`${GOOD}${run}`, CTX)).toEqual(problem('keyboard'));
  });

  it('keyboard: 3 keys of a row, or 4 keys that are not all in one row, pass', () => {
    expect(checkPassword(`${GOOD}asd`, CTX)).toEqual([]);
    expect(checkPassword(`${GOOD}1qaz`, CTX)).toEqual([]);
    expect(checkPassword(`${GOOD}qwsx`, CTX)).toEqual([]);
  });

  it.each([
    ['ascending digits that are no keyboard run', '0123'],
    ['descending digits', '3210'],
    ['letters, upper case', 'LMNO'],
    ['letters, mixed case, descending', 'oNmL'],
    ['letters with a substitution', 'r5tu'],
  ])('sequence: %s → sequence', (_what, run) => {
    expect(checkPassword(`${GOOD}${run}`, CTX)).toEqual(problem('sequence'));
  });

  it('sequence: 3 in order, or steps of 2, pass', () => {
    expect(checkPassword(`${GOOD}lmn`, CTX)).toEqual([]);
    expect(checkPassword(`${GOOD}aceg`, CTX)).toEqual([]);
  });

  it.each([
    ['an English word', 'Misunderstanding'],
    ['a German word', 'Krankenschwester'],
    ['a word, substituted', 'M1sund3r$t4nding'],
    ['a word, reversed', 'gnidnatsrednusim'],
  ])('leaked: %s → leaked', (_what, password) => {
    expect(checkPassword(password, CTX)).toEqual(problem('leaked'));
  });

  it('leaked: a leaked password breaks that rule besides the others it breaks; words inside a longer password pass', () => {
    expect(checkPassword('iloveyou', { brandWords: [] }).map((p) => p.rule)).toEqual(['length', 'distinct', 'leaked']);
    expect(checkPassword('misunderstanding-Vq7#', CTX)).toEqual([]);
  });

  it('a password breaking many rules gets all of them, in a fixed order, and no detail repeats it', () => {
    const password = 'hostplane.erika.shop.passwordqwerabcdä';
    const ctx = { userName: 'erika@shop.example', brandWords: ['hostplane'] };
    const problems = checkPassword(password, ctx);
    expect(problems.map((p) => p.rule)).toEqual(['characters', 'user_name', 'domain', 'brand', 'password_word', 'keyboard', 'sequence']);
    for (const p of problems) for (const part of [password, 'erika', 'shop']) expect(p.detail).not.toContain(part);
    expect(checkPassword('123', ctx).map((p) => p.rule)).toEqual(['length', 'distinct', 'leaked']);
    expect(checkPassword('aaaa', ctx).map((p) => p.rule)).toEqual(['length', 'distinct']);
  });
});

describe('problems as the API answers them (API guide "Errors", "E-mail addresses")', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    // A route that checks a password like the e-mail-address endpoints will.
    app = Fastify();
    registerJsonApi(app, { vendor: 'hostplane', links: new LinkBuilder(BASE), routes: trackRoutes(app) });
    app.post('/check', async (request, reply) => {
      const body = request.body as { data: { attributes: { password: string } } };
      const problems = checkPassword(body.data.attributes.password, { userName: 'erika@shop.example', brandWords: ['hostplane'] });
      if (problems.length) throw passwordErrors(problems);
      return reply.code(204).send();
    });
    await app.ready();
  });
  afterAll(() => app.close());

  it('one 422 invalid_password error per broken rule, each pointing at the password', async () => {
    const r = await call(app, 'POST', '/check', { body: { data: { attributes: { password: 'Erika-hostplane' } } } });
    expect(r.status).toBe(422);
    const error = (rule: PasswordRule) => ({
      id: 'invalid_password',
      status: '422',
      title: 'Invalid password',
      detail: rule === 'brand' ? brandDetail('hostplane') : DETAIL[rule],
      source: { pointer: '/data/attributes/password' },
    });
    expect(r.json).toEqual({ errors: (['length', 'user_name', 'brand'] as const).map(error), links: { self: `${BASE}/check` } });
    expect(r.body).not.toContain('Erika-hostplane');
  });

  it('a password that passes gets through', async () => {
    const r = await call(app, 'POST', '/check', { body: { data: { attributes: { password: GOOD } } } });
    expect(r.status).toBe(204);
  });
});

/** Literal passwords in a Markdown text: JSON `"password": "…"`, `--password …`, `-u user:…`, `user:…@` in URLs, `IDENTIFIED BY '…'`. */
function literalPasswords(text: string): string[] {
  const patterns = [
    /"(?:password|legacy_password)"\s*:\s*"([^"]*)"/g,
    /--password[ =]['"]?([^\s'"`|]+)/g,
    /\s-u\s+['"]?[^\s:'"]+:([^\s'"]+)/g,
    /:\/\/[^\s:/@`]+:([^\s@/`]+)@/g,
    /IDENTIFIED BY '([^']*)'/gi,
  ];
  // Placeholders: variables, <…>, elisions, NAMES, and the password words (their own rule).
  const placeholder = (v: string) => /[$<…*]|\.\.\./.test(v) || /^[A-Z_[\]]*$/.test(v) || ['password', 'passwort', 'kennwort'].includes(v.toLowerCase());
  return patterns.flatMap((re) => [...text.matchAll(re)].map((m) => m[1])).filter((v) => !placeholder(v));
}

describe('passwords shown in the docs (API guide "Password rules")', () => {
  it('finds literal passwords in a text, and not placeholders', () => {
    const text = [
      `curl -d '{"data":{"attributes":{"password":"Shown-In-Docs-42"}}}'`,
      `curl -s -u "10001:Legacy-Literal-7" …`,
      `DATABASE_URL=postgres://app:Url-Secret-9@db:5432/app`,
      `hostplane admin reseller set-legacy-password --customer 10001 --password Cli-Literal-3`,
      `curl -u "token:$TOKEN" -u '10001:<legacy password>'; postgres://user:password@host; mysql://ADMIN[:PASSWORD]@HOST`,
      `IDENTIFIED BY '…'; "legacy_password":"…"; --password-stdin`,
    ].join('\n');
    expect(literalPasswords(text).sort()).toEqual(['Cli-Literal-3', 'Legacy-Literal-7', 'Shown-In-Docs-42', 'Url-Secret-9']);
  });

  it('every literal password in docs/*.md and README.md is in the list', () => {
    const root = path.resolve(import.meta.dirname, '../..');
    const files = [...fs.readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => path.join(root, 'docs', f)), path.join(root, 'README.md')];
    const missing = files.flatMap((f) =>
      literalPasswords(fs.readFileSync(f, 'utf8'))
        .filter((p) => !DOCUMENTED_PASSWORDS.includes(p))
        .map((p) => `${path.relative(root, f)}: ${p}`),
    );
    expect(missing).toEqual([]);
  });

  it('each listed password breaks no other rule, so an example using it is a valid request', () => {
    for (const p of DOCUMENTED_PASSWORDS) expect(checkPassword(p, CTX)).toEqual(problem('documented'));
  });
});

// --- properties ---------------------------------------------------------------------------------

const ALLOWED_CHARS = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789', ...' !"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~'];
/** Random text of allowed characters: the "otherwise good" part around what a property puts in. */
const filler = (min: number, max: number) => fc.array(fc.constantFrom(...ALLOWED_CHARS), { minLength: min, maxLength: max }).map((a) => a.join(''));
const label = fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{1,10}[a-z0-9])$/).filter((l) => !l.includes('--'));
const domain = fc.tuple(fc.array(label, { minLength: 1, maxLength: 2 }), fc.stringMatching(/^[a-z]{2,6}$/)).map(([ls, tld]) => [...ls, tld].join('.'));
const localPart = fc.stringMatching(/^[a-z0-9](?:[a-z0-9._+-]{1,14}[a-z0-9])$/);
const brandWords = fc.array(fc.stringMatching(/^[a-z]{3,10}$/), { minLength: 1, maxLength: 3 });
const context = fc.record({ local: localPart, domain, brandWords }).map(
  ({ local, domain, brandWords }): PasswordContext => ({ userName: `${local}@${domain}`, domain, brandWords }),
);

/**
 * The substitutions of the API guide "Password rules", the other way round: the letters a user may
 * write otherwise.
 */
const DISGUISES: Record<string, string[]> = { o: ['0'], i: ['1'], e: ['3'], a: ['4', '@'], s: ['5', '$'], t: ['7'] };
/** `word` in random case, with random substitutions, maybe reversed: every form the rules undo. */
const disguised = (word: string) =>
  fc.tuple(fc.array(fc.nat(3), { minLength: word.length, maxLength: word.length }), fc.boolean()).map(([choices, reverse]) => {
    const chars = [...word].map((c, k) => {
      const subs = DISGUISES[c.toLowerCase()];
      if (choices[k] >= 2 && subs) return subs[choices[k] % subs.length];
      return choices[k] === 1 ? c.toUpperCase() : c.toLowerCase();
    });
    return (reverse ? chars.reverse() : chars).join('');
  });
/** `inner` inside random good text, long enough either way. */
const embedded = (inner: fc.Arbitrary<string>) => fc.tuple(filler(0, 10), inner, filler(8, 16)).map(([a, b, c]) => a + b + c);

/** Keyboard rows, written from the layouts: ASCII stretches only (QWERTZ's ß ü ö ä § ´ are not allowed characters). */
const ROWS = [
  '`1234567890-=', 'qwertyuiop[]\\', "asdfghjkl;'", 'zxcvbnm,./', '~!@#$%^&*()_+', 'QWERTYUIOP{}|', 'ASDFGHJKL:"', 'ZXCVBNM<>?',
  '1234567890', 'qwertzuiop', 'asdfghjkl', '<yxcvbnm,.-', '$%&/()=?', 'QWERTZUIOP', 'ASDFGHJKL', '>YXCVBNM;:_',
];
const keyboardRun = fc
  .constantFrom(...ROWS)
  .chain((row) => fc.tuple(fc.constant(row), fc.integer({ min: 4, max: Math.min(7, row.length) })))
  .chain(([row, n]) => fc.integer({ min: 0, max: row.length - n }).map((start) => row.slice(start, start + n)))
  .chain(disguised);
const orderedRun = fc
  .tuple(fc.constantFrom('abcdefghijklmnopqrstuvwxyz', '0123456789'), fc.integer({ min: 4, max: 6 }))
  .chain(([alphabet, n]) => fc.integer({ min: 0, max: alphabet.length - n }).map((start) => alphabet.slice(start, start + n)))
  .chain(disguised);

/** Whether `password` fails and one of its problems is `rule`. */
const failsWith = (password: string, ctx: PasswordContext, rule: PasswordRule) => {
  const rules = checkPassword(password, ctx).map((p) => p.rule);
  return rules.includes(rule);
};

describe('properties (fast-check)', () => {
  it('generated passwords: 20 characters of the alphabet, letters or digits at both ends, and they pass for their user', () => {
    fc.assert(
      fc.property(context, (ctx) => {
        const p = generatePassword(ctx);
        expect(p).toHaveLength(GENERATED_LENGTH);
        expect([...p].every((c) => GENERATED_ALPHABET.includes(c))).toBe(true);
        expect(p).toMatch(/^[A-Za-z0-9].*[A-Za-z0-9]$/);
        expect(checkPassword(p, ctx)).toEqual([]);
      }),
      { numRuns: 150 },
    );
  });

  it('generated passwords differ (from the RNG, not a fixed sequence)', () => {
    const ctx = { userName: 'info@example.com', brandWords: ['hostplane'] };
    const seen = new Set(Array.from({ length: 50 }, () => generatePassword(ctx)));
    expect(seen.size).toBe(50);
  });

  it('containing the user name (address, local part) in any form → never passes, user_name', () => {
    const arb = context.chain((ctx) => {
      const [local] = ctx.userName!.split('@');
      return fc.tuple(fc.constant(ctx), embedded(fc.constantFrom(local, ctx.userName!).chain(disguised)));
    });
    fc.assert(fc.property(arb, ([ctx, password]) => failsWith(password, ctx, 'user_name')), { numRuns: 150 });
  });

  it('containing the domain or a label of 3+ characters in any form → never passes, domain', () => {
    const arb = context.chain((ctx) => {
      const parts = [ctx.domain!, ...ctx.domain!.split('.').filter((l) => l.length >= 3)];
      return fc.tuple(fc.constant(ctx), embedded(fc.constantFrom(...parts).chain(disguised)));
    });
    fc.assert(fc.property(arb, ([ctx, password]) => failsWith(password, ctx, 'domain')), { numRuns: 150 });
  });

  it('containing a brand word in any form → never passes, brand', () => {
    const arb = context.chain((ctx) => fc.tuple(fc.constant(ctx), embedded(fc.constantFrom(...ctx.brandWords).chain(disguised))));
    fc.assert(fc.property(arb, ([ctx, password]) => failsWith(password, ctx, 'brand')), { numRuns: 150 });
  });

  it('containing 4+ neighbouring keys of a QWERTY or QWERTZ row, either direction, any case, substituted → never passes, keyboard', () => {
    fc.assert(fc.property(context, embedded(keyboardRun), (ctx, password) => failsWith(password, ctx, 'keyboard')), { numRuns: 200 });
  });

  it('containing 4+ letters or digits in order, either direction, any case, substituted → never passes, sequence', () => {
    fc.assert(fc.property(context, embedded(orderedRun), (ctx, password) => failsWith(password, ctx, 'sequence')), { numRuns: 150 });
  });
});
