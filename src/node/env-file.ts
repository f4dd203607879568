// /etc/hostplane/hostplane.env as `node setup` keeps it (decision 0018 "One command per node"): the
// settings setup owns are written every run; every other line of the file (an operator's own
// setting, a comment) is kept, and `--set NAME=value` adds or changes one.
import { EnvSchema, loadConfig, ConfigError } from '../config.js';

export const ENV_FILE = '/etc/hostplane/hostplane.env';

const HEADER = '# Written by hostplane node setup; the settings it owns are rewritten on its next run, your own lines are kept.';

/** Settings that are not hostplane's but its processes read (NODE_EXTRA_CA_CERTS). */
const PROCESS_SETTINGS = ['NODE_EXTRA_CA_CERTS'];

/** `NAME=value` → [NAME, value]; a value in double quotes is unquoted. Null for any other line. */
function parseLine(line: string): [string, string] | null {
  const m = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line.trim());
  if (!m) return null;
  const v = m[2];
  return [m[1], v.length >= 2 && v.startsWith('"') && v.endsWith('"') ? v.slice(1, -1).replace(/\\(["\\$`])/g, '$1') : v];
}

/** A value as both systemd and a shell read it: bare when it is plain, else in double quotes. */
function quote(value: string): string {
  return /^[A-Za-z0-9_./:@,+=-]*$/.test(value) ? value : `"${value.replace(/(["\\$`])/g, '\\$1')}"`;
}

/** The settings of an env file's text. */
export function readEnv(text: string): Record<string, string> {
  return Object.fromEntries(text.split('\n').map(parseLine).filter((e): e is [string, string] => e !== null));
}

/**
 * The new text: `owned` and `set` replace their names' lines where they are (or are appended),
 * every other line stays as it was.
 */
export function mergeEnv(existing: string, owned: Record<string, string>, set: Record<string, string>): string {
  const wanted = { ...owned, ...set };
  const done = new Set<string>();
  const kept = existing
    .split('\n')
    .filter((line, i, all) => !(i === all.length - 1 && line === '') && line !== HEADER)
    .flatMap((line) => {
      const entry = parseLine(line);
      if (!entry || !(entry[0] in wanted)) return [line];
      if (done.has(entry[0])) return [];
      done.add(entry[0]);
      return [`${entry[0]}=${quote(wanted[entry[0]])}`];
    });
  const added = Object.keys(wanted).filter((k) => !done.has(k)).map((k) => `${k}=${quote(wanted[k])}`);
  return `${[HEADER, ...kept, ...added].join('\n')}\n`;
}

/** `--set NAME=value` words → settings, or the problems (unknown names, bad values) at once. */
export function parseSets(words: string[]): { set: Record<string, string>; problems: string[] } {
  const set: Record<string, string> = {};
  const problems: string[] = [];
  for (const word of words) {
    const entry = parseLine(word);
    if (!entry) problems.push(`--set ${JSON.stringify(word)}: expected NAME=value`);
    else if (!(entry[0] in EnvSchema.properties) && !PROCESS_SETTINGS.includes(entry[0])) problems.push(`--set ${entry[0]}: not a setting (docs/operator-guide.md "Settings")`);
    else set[entry[0]] = entry[1];
  }
  return { set, problems };
}

/** What hostplane would say of these settings at start; empty when it would start. */
export function settingsProblems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
}
