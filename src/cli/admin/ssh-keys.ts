// `hostplane admin ssh-key add|list|remove`: a package's SSH keys from the operator's customer menu
// (API guide "SSH keys"), through the same service and rules as /ssh-keys, acting as the package's
// owner: the same refusals, the same jobs writing the key file on the package's web server.
import fs from 'node:fs';
import { Command } from 'commander';
import { CliError, parseId, withStore, type CliIo, type CommandContext } from '../context.js';
import { SshKeysService } from '../../resources/ssh-keys/ssh-keys.service.js';
import type { SshKeyRow } from '../../resources/ssh-keys/ssh-keys.repository.js';
import { leaf, printList, printResult, type Json } from './views.js';

const COLUMNS = ['id', 'package_id', 'algorithm', 'fingerprint', 'state', 'description', 'last_used_at'];

const keyView = (r: SshKeyRow) => ({
  id: String(r.id),
  package_id: String(r.package_id),
  public_key: r.public_key,
  fingerprint: r.fingerprint,
  algorithm: r.algorithm,
  description: r.description,
  state: r.state,
  created_at: r.created_at,
  last_used_at: r.last_used_at,
});

/** The owner of package `id`, as whom the menu acts (the API's tenancy then holds as for the customer). */
async function ownerOf(ctx: CommandContext, packageId: number) {
  const pkg = await ctx.admin.packages.package(packageId);
  return { customerId: pkg.customer_id, isReseller: false, contactId: null, tokenId: null };
}

export function sshKeyCommand(io: CliIo): Command {
  const cmd = new Command('ssh-key').description("SSH keys of packages: their Linux user logs in over SFTP with them on the package's web server");

  leaf(cmd.command('add').description("add a public key to a package; the job writes it to the key file on the package's web server"))
    .requiredOption('--package <id>', 'package id', parseId)
    .option('--key <line>', 'the public key: one line `<algorithm> <base64> [comment]`')
    .option('--key-file <path>', 'read the public key from this file (e.g. id_ed25519.pub); - reads standard input')
    .option('--description <text>', 'free text')
    .action((o: Json & { package: number; key?: string; keyFile?: string; description?: string }) =>
      withStore(io, async (ctx) => {
        if ((o.key === undefined) === (o.keyFile === undefined)) throw new CliError('Give the key with --key <line> or --key-file <path> (one of them).', 'usage');
        const publicKey = o.key ?? fs.readFileSync(o.keyFile === '-' ? 0 : o.keyFile!, 'utf8');
        const service = new SshKeysService(ctx);
        const { row, job } = await service.create(await ownerOf(ctx, o.package), { package_id: String(o.package), public_key: publicKey, description: o.description }, { fromMenu: true });
        printResult(ctx.out, o, { ...keyView(row), queue_job: String(job.id) }, `Added SSH key ${row.id} (${row.algorithm} ${row.fingerprint}) to package ${row.package_id}; job ${job.id} writes it to the key file.\n`);
      }),
    );

  leaf(cmd.command('list').description("list a package's SSH keys"))
    .requiredOption('--package <id>', 'package id', parseId)
    .action((o: Json & { package: number }) =>
      withStore(io, async (ctx) => {
        const { rows } = await new SshKeysService(ctx).list(await ownerOf(ctx, o.package), { package_id: [String(o.package)] }, null);
        printList(ctx.out, o, rows.map(keyView), COLUMNS);
      }),
    );

  leaf(cmd.command('remove').description('remove an SSH key; the job writes the key file without it'))
    .argument('<id>', 'key id', parseId)
    .requiredOption('--package <id>', 'the package the key belongs to', parseId)
    .action((id: number, o: Json & { package: number }) =>
      withStore(io, async (ctx) => {
        const service = new SshKeysService(ctx);
        const owner = await ownerOf(ctx, o.package);
        const key = await service.get(owner, String(id));
        if (key.package_id !== o.package) throw new CliError(`SSH key ${id} is not one of package ${o.package}.`, 'resource_not_found');
        const job = await service.delete(owner, String(id), { fromMenu: true });
        printResult(ctx.out, o, { id: String(id), removed: true, queue_job: String(job.id) }, `Removing SSH key ${id} (${key.fingerprint}); job ${job.id} writes the key file without it.\n`);
      }),
    );
  return cmd;
}
