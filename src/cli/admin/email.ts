// `hostplane admin email …`: operator actions on e-mail addresses.
import { Command } from 'commander';
import type { CliIo } from '../context.js';
import { dovecotMailDriver } from '../../provisioning/mail/driver.js';
import { refreshEmailUsage } from '../../resources/email-addresses/email-addresses.usage.js';
import { refreshUsageCommand } from './usage.js';

export function emailCommand(io: CliIo): Command {
  const cmd = new Command('email').description('e-mail addresses');
  refreshUsageCommand(cmd, io, {
    what: ['mailbox', 'mailboxes'],
    describe: "measure every mailbox's usage now (the worker does it daily); exits 1 if a mail server did not answer",
    driver: dovecotMailDriver,
    refresh: refreshEmailUsage,
  });
  return cmd;
}
