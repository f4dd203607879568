#!/usr/bin/env node
// The `hostplane` command (DESIGN.md layout; issue 2 items 1 and 6): serve | worker | dns | migrate | demo | admin …
// Settings come from the environment (API-NOTES §8). Exit codes: 0 done, 1 the command failed,
// 2 invalid settings (every problem listed).
import { createRequire } from 'node:module';
import { Command } from 'commander';
import { reportError } from './cli/context.js';
import { migrateCommand } from './cli/migrate.js';
import { demoCommand } from './cli/demo.js';
import { adminCommand } from './cli/admin.js';

// src/main.ts and dist/main.js both sit one level below package.json.
const { version } = createRequire(import.meta.url)('../package.json') as { version: string };

const program = new Command('hostplane')
  .description('Customer Hosting Management API server')
  .version(version)
  .addCommand(
    new Command('serve')
      .description('serve the API on HOST:PORT (settings from the environment; see docs/operator-guide.md)')
      // Loaded on demand: the HTTP stack is not needed by the operator commands, which start faster.
      .action(async () => (await import('./cli/serve.js')).serve()),
  )
  .addCommand(
    new Command('worker')
      .description('run the job worker alone (settings JOB_* and DATABASE_URL; see docs/operator-guide.md)')
      .action(async () => (await import('./cli/worker.js')).runWorker()),
  )
  .addCommand(
    new Command('dns')
      .description('run the authoritative DNS server alone on DNS_LISTEN (settings DNS_* and DATABASE_URL; see docs/operator-guide.md)')
      .action(async () => (await import('./cli/dns.js')).runDns()),
  )
  .addCommand(migrateCommand())
  .addCommand(demoCommand())
  .addCommand(adminCommand());

try {
  await program.parseAsync(process.argv);
} catch (err) {
  process.exitCode = reportError(err);
}
