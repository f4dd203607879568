// `hostplane admin dns-secondary …`: the secondary name servers fed by zone transfers from
// hostplane's DNS server (docs/decisions/0013-dns-secondaries.md). The TSIG key is
// read from a BIND key file as `tsig-keygen` writes it (never an argument: it would show in `ps`
// and the shell history), stored, and never printed: list and --json show its name only.
import fs from 'node:fs/promises';
import { Command } from 'commander';
import { CliError, withStore, type CliIo } from '../context.js';
import { DnsSecondariesService } from '../../admin/dns-secondaries.service.js';
import { leaf, printList, printResult, type Json } from './views.js';

const COLUMNS = ['name', 'address', 'tsig_key', 'algorithm', 'created_at'];
/** A key file holds one key statement: a bigger file is the wrong one. */
const KEY_FILE_MAX_BYTES = 4096;

async function readKeyFile(file: string): Promise<string> {
  try {
    const stat = await fs.stat(file);
    if (!stat.isFile()) throw new CliError(`--tsig-key-file ${file} is not a file.`, 'invalid_input');
    if (stat.size > KEY_FILE_MAX_BYTES) throw new CliError(`--tsig-key-file ${file} holds more than ${KEY_FILE_MAX_BYTES} bytes: give the file tsig-keygen wrote.`, 'invalid_input');
    return await fs.readFile(file, 'utf8');
  } catch (e) {
    if (e instanceof CliError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'there is no such file' : code === 'EACCES' ? 'permission denied' : (e as Error).message;
    throw new CliError(`Cannot read --tsig-key-file ${file}: ${why}.`, 'invalid_input');
  }
}

export function dnsSecondaryCommand(io: CliIo): Command {
  const cmd = new Command('dns-secondary').description('secondary name servers that transfer the zones from hostplane (AXFR/IXFR with TSIG, NOTIFY)');

  leaf(cmd.command('add').description('register a secondary: it may transfer every zone with its key from its address, gets a NOTIFY at every change, and DNS jobs wait until it serves the change'))
    .requiredOption('--name <name>', 'a short name, e.g. ns2')
    .requiredOption('--address <ip:port>', 'where the secondary answers DNS, e.g. 192.0.2.53:53; transfers are accepted from this IP only')
    .requiredOption('--tsig-key-file <file>', 'a BIND key file as tsig-keygen writes it: key "name" { algorithm hmac-sha256; secret "…"; };')
    .action(async (o: Json & { name: string; address: string; tsigKeyFile: string }) => {
      const text = await readKeyFile(o.tsigKeyFile);
      await withStore(io, async ({ store, out }) => {
        const s = await new DnsSecondariesService(store.db).add({ name: o.name, address: o.address, keyFileText: text });
        printResult(out, o, s, `Registered DNS secondary ${s.name} at ${s.address} (TSIG key ${s.tsig_key}, ${s.algorithm}).\n`);
      });
    });

  leaf(cmd.command('list').description('list the secondaries; TSIG secrets are never shown')).action((o: Json) =>
    withStore(io, async ({ store, out }) => printList(out, o, await new DnsSecondariesService(store.db).list(), COLUMNS)),
  );

  leaf(cmd.command('remove').description('forget a secondary: no more NOTIFY or transfers for it, and jobs stop waiting for it'))
    .argument('<name>', 'secondary name')
    .action((name: string, o: Json) =>
      withStore(io, async ({ store, out }) => {
        await new DnsSecondariesService(store.db).remove(name);
        printResult(out, o, { name, removed: true }, `Removed DNS secondary ${name}.\n`);
      }),
    );
  return cmd;
}
