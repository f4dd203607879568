// The password rules for passwords a client chooses (API guide "Password rules"): every rule is
// checked and each one broken is its own problem, which the API answers as one 422
// `invalid_password` error object (API guide "Errors", "E-mail addresses").
//
// The data comes from maintained sources, not hand-made lists: the leaked-password and word lists
// of @zxcvbn-ts (language-common's passwords, language-en, language-de) and its keyboard adjacency
// graphs (QWERTY, QWERTZ). zxcvbn-ts's own matchers find the candidates — the dictionary matcher
// (whole password in a list), the spatial matcher (keyboard chains) and the sequence matcher
// (constant steps in character codes) — and this module decides what counts as a broken rule:
// zxcvbn also reports diagonal keyboard chains, runs of 3 and steps of up to 5 (`aceg`), which
// the rules do not forbid. The lists load once, on first use (about 0.4 s and 40 MB of heap);
// `loadPasswordDictionaries()` does it ahead of the first request.
import { createRequire } from 'node:module';
import { Options, type DictionaryMatch, type OptionsGraphEntry, type SequenceMatch, type SpatialMatch } from '@zxcvbn-ts/core';
import { AppError, AppErrors } from '../errors.js';
import { toAce, toUnicode } from '../domain-name.js';
import { DOCUMENTED_PASSWORDS } from './documented-passwords.js';

export type PasswordRule =
  | 'length'
  | 'distinct'
  | 'characters'
  | 'user_name'
  | 'domain'
  | 'brand'
  | 'password_word'
  | 'documented'
  | 'keyboard'
  | 'sequence'
  | 'leaked';

/** One broken rule; `detail` tells the user what to change and never repeats the password. */
export interface PasswordProblem {
  /**
   * `portal`: the customer-portal password of the contact with this address (API guide "E-mail
   * addresses", "Password rules"), checked by the e-mail service.
   */
  rule: PasswordRule | 'portal';
  detail: string;
}

/** Whose password it is. `userName`: the mailbox address (or a bare user name); `domain`: its domain (else the address's). */
export interface PasswordContext {
  userName?: string;
  domain?: string;
  /** The brand name and its abbreviations (setting BRAND_WORDS, `config.brandWords`). */
  brandWords: string[];
}

export const MIN_LENGTH = 16;
export const MIN_DISTINCT = 10;
/** Keys in a row, letters or digits in order: this many or more is a broken rule. */
export const MIN_RUN = 4;
/** Parts of a user name or domain shorter than this are not looked for (a one-letter name would forbid that letter). */
export const MIN_NAME_PART = 3;
/** The OWASP password special characters, and space. */
export const SPECIAL_CHARACTERS = ` !"#$%&'()*+,-./:;<=>?@[\\]^_\`{|}~`;
/** The words for "password" in English and German. */
export const PASSWORD_WORDS = ['password', 'passwort', 'kennwort'] as const;

const ALLOWED = /^[A-Za-z0-9 !"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]*$/;
/**
 * The substitutions undone before comparing (API guide "Password rules"): `p4$$w0rd` reads as
 * `password`.
 */
const SUBSTITUTIONS: Record<string, string> = { '0': 'o', '1': 'i', '3': 'e', '4': 'a', '5': 's', '7': 't', '@': 'a', $: 's' };
const IN_ANY_FORM = 'not even in other letter case, reversed, or with digits or symbols in place of letters';

const DETAILS = {
  length: `The password must be at least ${MIN_LENGTH} characters long.`,
  distinct: `The password must contain at least ${MIN_DISTINCT} different characters; the upper and lower case of a letter count as one.`,
  characters:
    'The password may contain only the letters A-Z and a-z (no umlauts or other accented letters), the digits 0-9, ' +
    `spaces and these special characters: ${SPECIAL_CHARACTERS.slice(1)}`,
  user_name: `The password must not contain the user name, the mailbox address or a part of its name, ${IN_ANY_FORM}.`,
  domain: `The password must not contain the domain name or any part of it of ${MIN_NAME_PART} or more characters, ${IN_ANY_FORM}.`,
  password_word: `The password must not contain ${PASSWORD_WORDS.slice(0, -1).join(', ')} or ${PASSWORD_WORDS.at(-1)}, ${IN_ANY_FORM}.`,
  documented: 'The password contains a password shown as an example in our documentation; choose one of your own.',
  keyboard: `The password must not contain ${MIN_RUN} or more neighbouring keys of a keyboard row, in either direction (such as qwer or 0987).`,
  sequence: `The password must not contain ${MIN_RUN} or more letters or digits in alphabetical or numerical order, forwards or backwards (such as abcd or 4321).`,
  leaked: 'The password is a commonly used password or a dictionary word, as found in lists of leaked passwords; choose one that is not.',
} as const;

const brandDetail = (words: string[]) =>
  `The password must not contain the name of the service or its abbreviations (${words.join(', ')}), ${IN_ANY_FORM}.`;

/** Every rule the password breaks, in a fixed order; empty when it passes. */
export function checkPassword(password: string, ctx: PasswordContext): PasswordProblem[] {
  const problems: PasswordProblem[] = [];
  const add = (rule: PasswordRule, detail: string) => problems.push({ rule, detail });
  const chars = Array.from(password);
  const lower = password.toLowerCase();
  // Compared ignoring case and substitutions, forwards and reversed: `reversed` holds the reversed
  // form, so "contains w reversed" is "reversed contains w".
  const folded = fold(password);
  const reversed = Array.from(folded).reverse().join('');
  const contains = (words: Iterable<string>) => {
    for (const w of words) if (w && (folded.includes(w) || reversed.includes(w))) return true;
    return false;
  };

  if (chars.length < MIN_LENGTH) add('length', DETAILS.length);
  if (new Set(Array.from(lower)).size < MIN_DISTINCT) add('distinct', DETAILS.distinct);
  if (!ALLOWED.test(password)) add('characters', DETAILS.characters);

  const domain = ctx.domain ?? (ctx.userName?.includes('@') ? ctx.userName.slice(ctx.userName.lastIndexOf('@') + 1) : undefined);
  if (ctx.userName && contains(foldAll(userNameForms(ctx.userName)))) add('user_name', DETAILS.user_name);
  if (domain && contains(foldAll(domainForms(domain)))) add('domain', DETAILS.domain);
  const brand = [...new Set(ctx.brandWords.map((w) => w.trim().toLowerCase()).filter(Boolean))];
  if (contains(foldAll(brand))) add('brand', brandDetail(brand));
  if (contains(foldAll(PASSWORD_WORDS))) add('password_word', DETAILS.password_word);
  if (contains(documentedFolded())) add('documented', DETAILS.documented);

  const z = zxcvbn();
  // The password as typed (shifted keys such as `!@#$` are a row too) and with substitutions undone.
  const spellings = [...new Set([password, folded])];
  if (spellings.some((s) => hasRowRun(z.spatial.match({ password: s }), z.graphs))) add('keyboard', DETAILS.keyboard);
  if ([...new Set([lower, folded])].some((s) => hasOrderedRun(z.sequence.match({ password: s })))) add('sequence', DETAILS.sequence);
  if (isListed(password, folded, z)) add('leaked', DETAILS.leaked);
  return problems;
}

/** The API's answer to `problems`: one 422 `invalid_password` error per broken rule, pointing at the password. */
export function passwordErrors(problems: PasswordProblem[]): AppErrors {
  return new AppErrors(problems.map((p) => new AppError('invalid_password', p.detail, { pointer: '/data/attributes/password' })));
}

/** Loads the word lists and keyboard graphs now (they load on first use otherwise); idempotent. */
export function loadPasswordDictionaries(): void {
  zxcvbn();
}

/** Lower case, substitutions undone: the form every comparison uses. */
function fold(s: string): string {
  return s.toLowerCase().replace(/[013457@$]/g, (c) => SUBSTITUTIONS[c]);
}

function foldAll(words: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const w of words) if (w) out.add(fold(w));
  return out;
}

/** `Bücher` → `bucher`: how a name with accents is typed with the allowed letters. */
const withoutAccents = (s: string) => s.normalize('NFD').replace(/\p{M}/gu, '').replace(/ß/g, 'ss');

/**
 * A name, the name without its separators, and each of its parts: `john.smith` → john.smith,
 * johnsmith, john, smith; parts shorter than MIN_NAME_PART are left out.
 */
function nameParts(name: string, separators: RegExp): string[] {
  const out = [name, name.replace(new RegExp(separators.source, 'gu'), ''), ...name.split(separators)];
  return out.filter((p) => Array.from(p).length >= MIN_NAME_PART);
}

/** The user name in every form looked for: the whole address and its local part (with its parts). */
function userNameForms(userName: string): string[] {
  const name = userName.trim().toLowerCase();
  const at = name.lastIndexOf('@');
  const local = at > 0 ? name.slice(0, at) : name;
  const forms = at > 0 ? [name] : [];
  for (const l of new Set([local, withoutAccents(local)])) forms.push(...nameParts(l, /[^\p{L}\p{N}]+/u));
  return forms;
}

/** The domain (ACE and Unicode) and each label of 3+ characters, with its hyphenated parts. */
function domainForms(domain: string): string[] {
  const name = domain.trim().toLowerCase().replace(/\.$/, '');
  const ace = toAce(name) ?? name;
  const forms = new Set([name, ace, toUnicode(ace), withoutAccents(toUnicode(ace))]);
  const out: string[] = [];
  for (const f of forms) {
    out.push(f);
    for (const label of f.split('.')) {
      if (label.startsWith('xn--')) out.push(label);
      else out.push(...nameParts(label, /-+/u));
    }
  }
  return out.filter((f) => Array.from(f).length >= MIN_NAME_PART);
}

let documented: Set<string> | undefined;
const documentedFolded = () => (documented ??= foldAll(DOCUMENTED_PASSWORDS));

// --- zxcvbn-ts: the lists, graphs and matchers --------------------------------------------------

interface MatcherOf<M> {
  match(options: { password: string }): M[];
}
type MatcherClass<M> = new (options: Options) => MatcherOf<M>;

interface Zxcvbn {
  dictionary: MatcherOf<DictionaryMatch>;
  spatial: MatcherOf<SpatialMatch>;
  sequence: MatcherOf<SequenceMatch>;
  graphs: Record<string, OptionsGraphEntry>;
  /** Longest entry of any list: a longer password cannot be one. */
  maxWordLength: number;
}

let loaded: Zxcvbn | undefined;

/**
 * zxcvbn-ts's matchers over our lists. The package exports only its factory, whose `check` runs
 * every matcher and scores (with the l33t matcher ~100 ms a password), so the three matchers
 * the rules need are taken from its build (pinned by the lock file; the tests exercise each).
 * language-de 3 predates core 4 but its lists are plain arrays and load as they are; its keys get
 * a `-de` suffix like the English ones.
 */
function zxcvbn(): Zxcvbn {
  if (loaded) return loaded;
  const require = createRequire(import.meta.url);
  const common = require('@zxcvbn-ts/language-common') as typeof import('@zxcvbn-ts/language-common');
  const en = require('@zxcvbn-ts/language-en') as typeof import('@zxcvbn-ts/language-en');
  const de = require('@zxcvbn-ts/language-de') as typeof import('@zxcvbn-ts/language-de');
  const matcher = <M>(path: string) => require(`@zxcvbn-ts/core/dist/matcher/${path}.cjs`) as MatcherClass<M>;
  const graphs = { qwerty: common.adjacencyGraphs.qwerty, qwertz: common.adjacencyGraphs.qwertz } as Record<string, OptionsGraphEntry>;
  const dictionary: Record<string, string[]> = { 'passwords-common': common.dictionary['passwords-common'], ...en.dictionary };
  for (const [name, words] of Object.entries(de.dictionary)) dictionary[`${name}-de`] = words;
  const options = new Options({ dictionary, graphs });
  loaded = {
    dictionary: new (matcher<DictionaryMatch>('dictionary/matching'))(options),
    spatial: new (matcher<SpatialMatch>('spatial/matching'))(options),
    sequence: new (matcher<SequenceMatch>('sequence/matching'))(options),
    graphs,
    maxWordLength: Math.max(...Object.values(options.rankedDictionariesMaxWordSize)),
  };
  return loaded;
}

/** Adjacency graph directions (zxcvbn order: left, upper left, upper right, right, lower right, lower left). */
const LEFT = 0;
const RIGHT = 3;

/** Whether a keyboard chain holds MIN_RUN keys in a row, each right (or each left) of the one before. */
function hasRowRun(matches: SpatialMatch[], graphs: Record<string, OptionsGraphEntry>): boolean {
  for (const m of matches) {
    const graph = graphs[m.graph];
    const keys = Array.from(m.token);
    let run = 1;
    let direction = -1;
    for (let k = 1; k < keys.length; k++) {
      const d = (graph[keys[k - 1]] ?? []).findIndex((adjacent) => adjacent?.includes(keys[k]));
      if (d === LEFT || d === RIGHT) {
        run = d === direction ? run + 1 : 2;
        direction = d;
      } else {
        run = 1;
        direction = -1;
      }
      if (run >= MIN_RUN) return true;
    }
  }
  return false;
}

const charClass = (c: string) => (c >= 'a' && c <= 'z' ? 'letter' : c >= '0' && c <= '9' ? 'digit' : null);

/** Whether a sequence holds MIN_RUN letters (or digits) each one after (or each one before) the previous. */
function hasOrderedRun(matches: SequenceMatch[]): boolean {
  for (const m of matches) {
    const t = m.token;
    let run = 1;
    let step = 0;
    for (let k = 1; k < t.length; k++) {
      const d = t.charCodeAt(k) - t.charCodeAt(k - 1);
      const cls = charClass(t[k]);
      if ((d === 1 || d === -1) && cls !== null && cls === charClass(t[k - 1])) {
        run = d === step ? run + 1 : 2;
        step = d;
      } else {
        run = 1;
        step = 0;
      }
      if (run >= MIN_RUN) return true;
    }
  }
  return false;
}

/**
 * Whether the whole password is an entry of a list (leaked passwords, English and German words and
 * names), as typed or with substitutions undone, forwards or reversed. Containing a word is not
 * enough: a long password made of words is not a leaked password.
 */
function isListed(password: string, folded: string, z: Zxcvbn): boolean {
  if (password.length > z.maxWordLength) return false;
  const forms = new Set([password.toLowerCase(), folded]);
  for (const f of [...forms]) forms.add(Array.from(f).reverse().join(''));
  for (const f of forms) {
    if (z.dictionary.match({ password: f }).some((m) => m.i === 0 && m.j === f.length - 1)) return true;
  }
  return false;
}
