// `hostplane lab up|down <dir>` (decision 0018 "The lab"): Debian 13 hosts booted on a private
// network, for trying and testing the node setup. The lab's code is loaded only by these two
// commands, never by the product.
import { Command } from 'commander';
import { CliError, output, type CliIo } from './context.js';

async function lab() {
  return import('../lab/lab.js');
}

/** The lab's failures are the user's to act on (missing tools, a lab already running): one message each. */
async function asCliError<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw new CliError(err instanceof Error ? err.message : String(err), 'lab_failed');
  }
}

export function labCommand(io: CliIo): Command {
  const out = output(io.stdout);
  return new Command('lab')
    .description('boot Debian 13 hosts (api, web, mail, db) and a client on a private network in 198.18.0.0/24 (root; debootstrap, systemd-nspawn)')
    .addCommand(
      new Command('cache')
        .description('build or complete the cache in /var/cache/hostplane-lab (root filesystem, package repository) without booting anything')
        .action(() =>
          asCliError(async () => {
            const log = (line: string) => void io.stderr.write(`lab: ${line}\n`);
            const { ensureRootfs, ensureRepo } = await import('../lab/cache.js');
            out.text(`${await ensureRepo(await ensureRootfs(log), log)}\n`);
          }),
        ),
    )
    .addCommand(
      new Command('up')
        .description('build the cache in /var/cache/hostplane-lab if missing, then boot the lab; writes <dir>/lab.json and <dir>/state.json')
        .argument('<dir>', 'the lab directory (hosts\' changes, state, description)')
        .option('--bare', 'boot the hosts without setting them up as nodes')
        .option('--one-server', 'one host with every role (host.lab.test), as the operator guide\'s "One Debian 13 server"; else a company of five hosts')
        .action((dir: string, o: { bare?: boolean; oneServer?: boolean }) =>
          asCliError(async () => (await lab()).labUp(dir, (line) => void io.stderr.write(`lab: ${line}\n`), { bare: o.bare, shape: o.oneServer ? 'one-server' : 'company' })),
        ),
    )
    .addCommand(
      new Command('reboot')
        .description('power one host of the running lab off and boot it again, as a server reboots')
        .argument('<dir>', 'the lab directory given to `lab up`')
        .argument('<host>', 'api, web, mail, db or ns2 (a one-server lab: host)')
        .action((dir: string, host: string) =>
          asCliError(async () => {
            await (await lab()).labReboot(dir, host);
            out.text(`${host} was rebooted\n`);
          }),
        ),
    )
    .addCommand(
      new Command('down')
        .description('stop and remove everything the lab in <dir> started (processes, mounts, namespaces, interfaces)')
        .argument('<dir>', 'the lab directory given to `lab up`')
        .action((dir: string) =>
          asCliError(async () => {
            const removed = await (await lab()).labDown(dir);
            out.text(removed.length ? `${removed.join('\n')}\n` : 'nothing was left to remove\n');
          }),
        ),
    );
}
