// What a newcomer reads before anything runs: the README's command table names every command the
// CLI has, each with every option (found the way a user finds them, from the help's "Commands:"
// and "Options:"); package.json says what hostplane is, not what it was missing once; the README
// says under which licence it comes, as LICENSE and package.json do.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const PACKAGE = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

/** The subcommand names under "Commands:" in a help text, without commander's `help`. */
const subcommands = (help: string) =>
  [...(help.split(/^Commands:\n/m)[1] ?? '').matchAll(/^ {2}(\S+)/gm)].map((m) => m[1]).filter((name) => name !== 'help');
/** The long options under "Options:", without the ones every command has. */
const options = (help: string) =>
  [...(help.split(/^Options:\n/m)[1] ?? '').split(/^Commands:/m)[0].matchAll(/^ {2}(?:-\w, )?(--[a-z][a-z-]*)/gm)]
    .map((m) => m[1])
    .filter((o) => !['--help', '--version', '--json'].includes(o));

/** The first cells of the README's command table: `hostplane admin web-server add --name … / \`list\` / \`remove <name>\``. */
function commandCells(): string[] {
  const section = README.split(/^## The `hostplane` command$/m)[1].split(/^## /m)[0];
  return section
    .split('\n')
    .filter((l) => l.startsWith('| `hostplane'))
    .map((l) => l.split(/(?<!\\)\|/)[1]);
}

/** The cell of `hostplane <words>`: it starts with the command, or with its noun and lists the verb after a slash. */
function cellOf(cells: string[], words: string[]): string | undefined {
  const full = `\`hostplane ${words.join(' ')}`;
  const noun = `\`hostplane ${words.slice(0, -1).join(' ')} `;
  const verb = words.at(-1)!;
  return cells.find((c) => new RegExp(`${escape(full)}[ \`]`).test(c)) ?? cells.find((c) => c.includes(noun) && new RegExp(`/ \`${escape(verb)}[ \`]`).test(c));
}
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('README.md and package.json', () => {
  it('the command table names every command with every option of its help', async () => {
    const cells = commandCells();
    const missing: string[] = [];
    const walk = async (words: string[]) => {
      const help = (await runCli([...words, '--help'], {})).stdout;
      const subs = subcommands(help);
      if (words.length && !subs.length) {
        const cell = cellOf(cells, words);
        if (!cell) missing.push(`hostplane ${words.join(' ')}`);
        else for (const o of options(help)) if (!cell.includes(o)) missing.push(`hostplane ${words.join(' ')} ${o}`);
      }
      for (const sub of subs) await walk([...words, sub]);
    };
    await walk([]);
    expect(missing).toEqual([]);
    // The walk reached the commands the table lacked once.
    for (const words of [['admin', 'dns-secondary', 'add'], ['admin', 'web-server', 'remove'], ['admin', 'mail-server', 'remove']]) {
      expect(cellOf(cells, words), words.join(' ')).toBeDefined();
    }
  });

  it('package.json describes hostplane as it is', () => {
    expect(PACKAGE.description).not.toMatch(/not (yet )?available/i);
    for (const part of ['DNS', 'databases', 'subdomains', 'e-mail', 'domain availability']) expect(PACKAGE.description).toContain(part);
  });

  it('the README has a License section naming the MIT License of LICENSE and package.json', () => {
    const section = README.split(/^## License$/m)[1];
    expect(section).toBeDefined();
    expect(section).toContain('MIT License');
    expect(section).toContain('[LICENSE](LICENSE)');
    expect(fs.readFileSync(path.join(ROOT, 'LICENSE'), 'utf8').split('\n')[0]).toBe('MIT License');
    expect(PACKAGE.license).toBe('MIT');
  });
});
