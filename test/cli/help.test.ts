// The help of every command: it explains itself and cites no document a user of the command does
// not have (no section signs, no notes kept outside the repository). The commands are found the way
// a user finds them, from the "Commands:" section of each help.
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

/** The subcommand names listed under "Commands:" in a help text, without commander's `help`. */
function subcommands(help: string): string[] {
  const section = help.split(/^Commands:\n/m)[1] ?? '';
  return [...section.matchAll(/^ {2}(\S+)/gm)].map((m) => m[1]).filter((name) => name !== 'help');
}

describe('hostplane --help', () => {
  it('every command has help on stdout (exit 0) that cites no document outside the repository', async () => {
    const seen: string[] = [];
    const walk = async (path: string[]) => {
      const r = await runCli([...path, '--help'], {});
      expect({ code: r.code, stderr: r.stderr }, path.join(' ')).toEqual({ code: 0, stderr: '' });
      expect(r.stdout, path.join(' ')).toMatch(/^Usage: hostplane/);
      expect(r.stdout, path.join(' ')).not.toMatch(/§|API.NOTES|\bspec\b/i);
      seen.push(path.join(' '));
      for (const sub of subcommands(r.stdout)) await walk([...path, sub]);
    };
    await walk([]);
    // The walk reached the leaves, e.g. every admin noun's create.
    expect(seen).toEqual(expect.arrayContaining([
      'serve', 'worker', 'dns', 'migrate', 'demo', 'admin customer create', 'admin contact delete', 'admin token create',
      'admin plan create', 'admin package set-plan', 'admin domain create', 'admin reseller set-legacy-password',
    ]));
  });

  it('set-legacy-password offers --password-stdin next to --password', async () => {
    const r = await runCli(['admin', 'reseller', 'set-legacy-password', '--help'], {});
    // Wrapped at 80 columns: compared as one line.
    const help = r.stdout.replace(/\s+/g, ' ');
    expect(help).toContain(
      ' --password <password> use this password (at least 12 characters) instead of a generated one; others can see it in `ps`, so prefer --password-stdin ' +
        '--password-stdin read the password from stdin (one line) instead of the command line ',
    );
  });
});
