// The API guide's "Password rules" as hints while a password is typed: the rules a page can judge
// on its own (length, characters, names, keyboard rows, sequences) met or not; the others (leaked
// and dictionary passwords, passwords from the guide, the service's name, the portal password)
// only the API judges. A hint only: the API decides, and its refusal is shown at the field.

export const LIVE_RULES = ['length', 'distinct', 'characters', 'user_name', 'domain', 'password_word', 'keyboard', 'sequence'] as const;
export type LiveRule = (typeof LIVE_RULES)[number];
/** The rules only the API can judge (word lists, settings, the portal password). */
export const API_RULES = ['brand', 'leaked', 'documented', 'portal'] as const;

const ALLOWED = /^[A-Za-z0-9 !"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]*$/;
const SUBSTITUTIONS: Record<string, string> = { '0': 'o', '1': 'i', '3': 'e', '4': 'a', '5': 's', '7': 't', '@': 'a', $: 's' };
const ROWS = ['1234567890', 'qwertyuiop', 'qwertzuiop', 'asdfghjkl', 'zxcvbnm', 'yxcvbnm', '!@#$%^&*()', '!"§$%&/()='];
const RUN = 4;
const NAME_PART = 3;

const fold = (s: string) => s.toLowerCase().replace(/[013457@$]/g, (c) => SUBSTITUTIONS[c]);
const reverse = (s: string) => Array.from(s).reverse().join('');
const parts = (name: string, separators: RegExp) => [name, name.replace(new RegExp(separators.source, 'g'), ''), ...name.split(separators)].filter((p) => p.length >= NAME_PART);

function containsAny(password: string, words: string[]) {
  const folded = fold(password);
  const reversed = reverse(folded);
  return words.map(fold).some((w) => folded.includes(w) || reversed.includes(w));
}

function rowRun(s: string) {
  for (const row of ROWS) {
    for (const r of [row, reverse(row)]) for (let i = 0; i + RUN <= r.length; i++) if (s.includes(r.slice(i, i + RUN))) return true;
  }
  return false;
}

function orderedRun(s: string) {
  const kind = (c: string) => (/[a-z]/.test(c) ? 'letter' : /[0-9]/.test(c) ? 'digit' : null);
  let length = 1;
  let step = 0;
  for (let i = 1; i < s.length; i++) {
    const d = s.charCodeAt(i) - s.charCodeAt(i - 1);
    const same = kind(s[i]) !== null && kind(s[i]) === kind(s[i - 1]) && Math.abs(d) === 1;
    length = same && (length === 1 || d === step) ? length + 1 : same ? 2 : 1;
    step = same ? d : 0;
    if (length >= RUN) return true;
  }
  return false;
}

/** Which live rules `password` meets, for the mailbox `address` (`local@domain`). */
export function passwordHints(password: string, address: string): Record<LiveRule, boolean> {
  const at = address.lastIndexOf('@');
  const local = address.slice(0, at).toLowerCase();
  const domain = address.slice(at + 1).toLowerCase();
  const labels = domain.split('.').flatMap((l) => parts(l, /-+/));
  const lower = password.toLowerCase();
  return {
    length: password.length >= 16 && password.length <= 72,
    distinct: new Set(Array.from(lower)).size >= 10,
    characters: ALLOWED.test(password),
    user_name: !containsAny(password, [address.toLowerCase(), ...parts(local, /[^a-z0-9]+/)]),
    domain: !containsAny(password, [domain, ...labels].filter((d) => d.length >= NAME_PART)),
    password_word: !containsAny(password, ['password', 'passwort', 'kennwort']),
    keyboard: !rowRun(lower) && !rowRun(fold(password)),
    sequence: !orderedRun(lower) && !orderedRun(fold(password)),
  };
}
