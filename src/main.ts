#!/usr/bin/env node
// The `hostplane` command: serve | worker | dns | migrate | demo | admin … | node render | node mail-policy | lab
// Settings come from the environment (docs/operator-guide.md "The operator CLI"). Exit codes: 0
// done, 1 the command failed, 2 invalid settings (every problem listed); with --json a failure is
// one JSON line on stderr.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { jsonError, processIo, reportError, type CliIo, type Writer } from './cli/context.js';
import { migrateCommand } from './cli/migrate.js';
import { demoCommand } from './cli/demo.js';
import { adminCommand } from './cli/admin/index.js';
import { nodeCommand } from './cli/node.js';
import { labCommand } from './cli/lab.js';

// src/main.ts and dist/main.js both sit one level below package.json.
const { version } = createRequire(import.meta.url)('../package.json') as { version: string };

function program(io: CliIo): Command {
  return new Command('hostplane')
    .description('Customer Hosting Management API server')
    .version(version)
    .addCommand(
      new Command('serve')
        .description('serve the API on HOST:PORT (settings from the environment; see docs/operator-guide.md)')
        // Loaded on demand: the HTTP stack is not needed by the operator commands, which start faster.
        .action(async () => (await import('./cli/serve.js')).serve(io.env)),
    )
    .addCommand(
      new Command('worker')
        .description('run the job worker alone (settings JOB_* and DATABASE_URL; see docs/operator-guide.md)')
        .option('--web-server <name>', "run only the jobs of this web server's sites, on its host (same as WEB_SERVER)")
        .action(async (o: { webServer?: string }) =>
          (await import('./cli/worker.js')).runWorker(o.webServer ? { ...io.env, WEB_SERVER: o.webServer } : io.env),
        ),
    )
    .addCommand(
      new Command('dns')
        .description('run the authoritative DNS server alone on DNS_LISTEN (settings DNS_* and DATABASE_URL; see docs/operator-guide.md)')
        .action(async () => (await import('./cli/dns.js')).runDns(io.env)),
    )
    .addCommand(migrateCommand(io))
    .addCommand(demoCommand(io))
    .addCommand(adminCommand(io))
    .addCommand(nodeCommand(io))
    .addCommand(labCommand(io));
}

/** commander's own exit (usage error, --help, --version), after it printed what it had to say. */
class CommanderExit {
  constructor(readonly code: number) {}
}

/** How a failure is printed: JSON when the command was asked for `--json`. */
interface Reporting {
  json: boolean;
}

const columns = (w: Writer) => ((w as NodeJS.WriteStream).isTTY ? (w as NodeJS.WriteStream).columns : 80);

/** Commands added with addCommand() do not inherit these settings, so every one gets them. */
function routeOutput(cmd: Command, io: CliIo, reporting: Reporting) {
  cmd
    .exitOverride((err) => {
      throw new CommanderExit(err.exitCode);
    })
    .configureOutput({
      writeOut: (s) => void io.stdout.write(s),
      writeErr: (s) => void io.stderr.write(s),
      // Help is wrapped to the terminal it is written to; to 80 columns anywhere else.
      getOutHelpWidth: () => columns(io.stdout),
      getErrHelpWidth: () => columns(io.stderr),
      // Usage errors (an unknown option, a malformed id); help and --version are not errors.
      outputError: (s, write) => write(reporting.json ? jsonError('usage', s.trim().replace(/^error: /, '')) : s),
    });
  for (const sub of cmd.commands) routeOutput(sub, io, reporting);
}

/**
 * Runs `hostplane <argv…>` and resolves to its exit code, printing to `io` and reading settings
 * (and, for `--password-stdin`, secrets) from `io` (the process's own by default). A fresh
 * program per call, so runs may overlap:
 * `await main(['admin', 'customer', 'list', '--json'], { stdout, stderr, env: { DATABASE_URL: '/tmp/x.db' } })`.
 * `serve`, `worker` and `dns` resolve once started and then own the process (signals, exit).
 */
export async function main(argv: string[], io: Partial<CliIo> = {}): Promise<number> {
  const cli: CliIo = { ...processIo(), ...io };
  // Until commander has parsed the options (a usage error), the arguments say whether JSON was asked for.
  const reporting: Reporting = { json: argv.includes('--json') };
  const cmd = program(cli).hook('preAction', (_root, action) => {
    reporting.json = action.opts().json === true;
  });
  routeOutput(cmd, cli, reporting);
  try {
    await cmd.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof CommanderExit) return err.code;
    return reportError(err, { write: (s) => void cli.stderr.write(s), env: cli.env, json: reporting.json });
  }
}

/** True when this file is the script node was started with (also through npm's bin symlink). */
function isEntry(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  const self = fs.realpathSync(fileURLToPath(import.meta.url));
  // `node dist/main` names the file without its extension.
  return [script, `${script}.js`].some((p) => fs.existsSync(p) && fs.realpathSync(p) === self);
}

if (isEntry()) process.exitCode = await main(process.argv.slice(2));
