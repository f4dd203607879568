// `hostplane admin …`: the operator's customer menu (API guide "Authentication"), one file per
// noun. Thin over Admin: parse, call, print. Every command prints for people by default and
// one compact JSON value with `--json` (ids as strings, like the API; views.ts). A create command
// prints the object as the matching list command shows it, plus any one-time secret (`token`,
// `legacy_password`).
import { Command } from 'commander';
import type { CliIo } from '../context.js';
import { customerCommand } from './customers.js';
import { contactCommand } from './contacts.js';
import { tokenCommand } from './tokens.js';
import { planCommand } from './plans.js';
import { packageCommand } from './packages.js';
import { domainCommand } from './domains.js';
import { resellerCommand } from './reseller.js';
import { databaseServerCommand } from './database-servers.js';
import { databaseCommand } from './databases.js';
import { webServerCommand } from './web-servers.js';
import { subdomainCommand } from './subdomains.js';
import { mailServerCommand } from './mail-servers.js';
import { emailCommand } from './email.js';
import { dnsSecondaryCommand } from './dns-secondaries.js';
import { sshKeyCommand } from './ssh-keys.js';
import { webhookCommand } from './webhooks.js';
import { auditCommand } from './audit.js';

export function adminCommand(io: CliIo): Command {
  return new Command('admin')
    .description('operator actions: customers, contacts, tokens, plans, packages, domains, database servers, databases, web servers, subdomains, SSH keys, mail servers, e-mail, DNS secondaries, webhooks, the audit trail')
    .addCommand(customerCommand(io))
    .addCommand(contactCommand(io))
    .addCommand(tokenCommand(io))
    .addCommand(planCommand(io))
    .addCommand(packageCommand(io))
    .addCommand(domainCommand(io))
    .addCommand(resellerCommand(io))
    .addCommand(databaseServerCommand(io))
    .addCommand(databaseCommand(io))
    .addCommand(webServerCommand(io))
    .addCommand(subdomainCommand(io))
    .addCommand(sshKeyCommand(io))
    .addCommand(mailServerCommand(io))
    .addCommand(emailCommand(io))
    .addCommand(dnsSecondaryCommand(io))
    .addCommand(webhookCommand(io))
    .addCommand(auditCommand(io));
}
