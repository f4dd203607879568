// `hostplane node mail-policy --config <file>`: the outbound limits' policy service of a mail
// server (docs/decisions/0020-outbound-limits.md), what hostplane-mail-policy.service and the local
// stack run. It reads the limits with the mail server's read-only access to the store (the config
// file `node render` writes), never with DATABASE_URL, and migrates nothing.
import pino from 'pino';
import { MailLimitsRepository } from '../mail-policy/limits.repository.js';
import { startMailPolicyServer } from '../mail-policy/server.js';
import type { MailPolicyConfig } from '../node/render/index.js';
import { CliError, type CliIo } from './context.js';

/** Runs until SIGTERM or SIGINT; rejects when it cannot listen. */
export async function runMailPolicy(io: CliIo, config: MailPolicyConfig): Promise<void> {
  const log = pino({ level: io.env.LOG_LEVEL ?? 'info' }).child({ component: 'mail-policy' });
  const limits = MailLimitsRepository.open(config.store, config.name);
  const at = config.listen.lastIndexOf(':');
  const listen = { host: config.listen.slice(0, at), port: Number(config.listen.slice(at + 1)) };
  const server = await startMailPolicyServer(listen, limits, log).catch(async (err: NodeJS.ErrnoException) => {
    await limits.close().catch(() => {});
    throw new CliError(`cannot listen on ${config.listen}: ${err.code === 'EADDRINUSE' ? 'the address is in use' : err.message}`);
  });
  // Said at once rather than at the first message: a store it cannot read defers every recipient.
  await limits.recipientsPerHour('').then(
    () => log.info({ listen: config.listen, server: config.name, store: config.store.driver }, 'hostplane mail-policy ready'),
    (err: unknown) => log.error({ err, listen: config.listen }, 'hostplane mail-policy listens, but cannot read the limits from the store: recipients of logged-in senders are deferred until it can'),
  );
  let stopping = false;
  const stop = async () => {
    if (stopping) process.exit(1);
    stopping = true;
    await server.close();
    await limits.close().catch(() => {});
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
