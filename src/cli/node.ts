// `hostplane node …`: what makes a host a hosting node (docs/decisions/0018-nodes-on-debian.md).
// `node render` writes a mail node's configuration files from a facts file, in the private profile
// (the local stack: deploy/local/up.sh calls it) or the system profile (a Debian node); `node
// render-knot` writes a Knot secondary's knot.conf (the local stack's; node setup renders its own);
// `node mail-policy` runs a mail server's outbound limits (docs/decisions/0020-outbound-limits.md);
// `node render-sshd` writes the local stack's sshd_config for SFTP (docs/decisions/0023-sftp.md).
import fs from 'node:fs';
import path from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { CliError, output, type CliIo } from './context.js';
import { FactsError, knotConf, mailFiles, privateFacts, readKnotInput, readMailPolicyConfig, readPrivateInput, readSystemInput, systemFacts, type Profile } from '../node/render/index.js';
import { placeFile, placeFiles } from '../node/files.js';
import { DNS_SERVERS, parseRoles, ROLES, type DnsServer } from '../node/roles.js';

function parseProfile(value: string): Profile {
  if (value !== 'private' && value !== 'system') throw new InvalidArgumentError('must be private (the local stack) or system (a Debian node).');
  return value;
}

interface RenderOptions {
  profile: Profile;
  facts: string;
  out: string;
  json?: boolean;
}

export function nodeCommand(io: CliIo): Command {
  return new Command('node').description("set up this host as a hosting node (docs/decisions/0018-nodes-on-debian.md)").addCommand(setupCommand(io)).addCommand(certsCommand(io)).addCommand(
    new Command('render')
      .description("write a mail node's Dovecot, Postfix and rspamd files from a facts file (JSON), with their modes and groups")
      .requiredOption('--profile <profile>', 'private (the local stack, loopback ports, no TLS) or system (Debian paths, standard ports, TLS)', parseProfile)
      .requiredOption('--facts <file>', "the node's facts as JSON (docs/operator-guide.md \"What a mail server needs\")")
      .requiredOption('--out <dir>', 'an existing directory the files are written under (their paths are relative to the facts root)')
      .option('--json', 'print [{"path":…,"mode":…,"group":…,"changed":…}, …]')
      .action((o: RenderOptions) => render(io, o)),
  ).addCommand(
    new Command('render-knot')
      .description("write knot.conf of a Knot secondary of hostplane's DNS server (following its catalog zone) from a facts file (JSON), mode 0600")
      .requiredOption('--facts <file>', 'its facts as JSON: listen, user (optional), rundir, storage, log, control (optional), key {name, secret}, primary {host, port}, via, catalogZone, refreshMaxS, retryMaxS')
      .requiredOption('--out <file>', 'the knot.conf to write, in an existing directory; left alone when it is right already')
      .option('--json', 'print {"path":…,"changed":…}')
      .action((o: KnotOptions) => renderKnot(io, o)),
  ).addCommand(
    new Command('render-sshd')
      .description("write the local stack's sshd_config: SFTP for the packages' users on loopback (node setup places its own drop-in)")
      .requiredOption('--listen <addr:port>', 'a loopback address and port, e.g. 127.0.0.1:2222')
      .requiredOption('--host-key <file>', "the stack's own host key")
      .requiredOption('--pid-file <file>', "where sshd writes its pid")
      .requiredOption('--chroot-root <dir>', 'the home root as sshd sees it (the packages chroot into <dir>/<user>)')
      .requiredOption('--state-dir <dir>', "the web server's state dir (the keys: <dir>/ssh/authorized_keys/<user>)")
      .requiredOption('--out <file>', 'the sshd_config to write, in an existing directory; left alone when it is right already')
      .action(async (o: SshdOptions) => {
        const { privateSshdConfig } = await import('../node/render/sshd.js');
        let text: string;
        try {
          text = privateSshdConfig({ listen: o.listen, hostKey: o.hostKey, pidFile: o.pidFile, chrootRoot: o.chrootRoot, stateDir: o.stateDir });
        } catch (err) {
          throw new CliError((err as Error).message, 'invalid_input', 2);
        }
        const out = path.resolve(o.out);
        if (!fs.statSync(path.dirname(out), { throwIfNoEntry: false })?.isDirectory()) {
          throw new CliError(`--out: ${path.dirname(out)} is not a directory; create it first.`, 'invalid_input', 2);
        }
        const changed = (await placeFile({ path: out, text, mode: 0o644 })) === 'written';
        output(io.stdout).text(changed ? `Wrote ${out}\n` : `${out} was up to date\n`);
      }),
  ).addCommand(
    new Command('mail-policy')
      .description("run this mail server's policy service for Postfix's submission services: recipients per mailbox and hour, as its plan says")
      .requiredOption('--config <file>', 'its config (JSON: name, listen, store), written by node render: /etc/hostplane/mail-policy.json on a node')
      .action(async (o: { config: string }) => {
        const config = checkedFacts(o.config, readMailPolicyConfig, 'mail policy config', '--config');
        await (await import('./mail-policy.js')).runMailPolicy(io, config);
      }),
  );
}

interface SshdOptions {
  listen: string;
  hostKey: string;
  pidFile: string;
  chrootRoot: string;
  stateDir: string;
  out: string;
}

interface KnotOptions {
  facts: string;
  out: string;
  json?: boolean;
}

interface SetupCliOptions {
  roles: string;
  name: string;
  store?: string;
  acmeDirectory?: string;
  acmeCaRoot?: string;
  acmeEmail?: string;
  address?: string;
  set: string[];
  dnsServer?: DnsServer;
  dnsPrimary?: string;
}

function parseDnsServer(value: string): DnsServer {
  if (!(DNS_SERVERS as readonly string[]).includes(value)) throw new InvalidArgumentError(`must be ${DNS_SERVERS.join(' or ')}.`);
  return value as DnsServer;
}

function setupCommand(io: CliIo): Command {
  return new Command('setup')
    .description('make this Debian 13 host a node of the given roles: install, configure, start and register; run again to converge or upgrade (root)')
    .requiredOption('--roles <roles>', `comma-separated: ${ROLES.join(', ')}`)
    .requiredOption('--name <fqdn>', "this host's full domain name, e.g. db1.example.net; its first label is its name in hostplane")
    .option('--store <url>', 'postgres://… of the api node (required without the api role)')
    .option('--acme-directory <url>', "the ACME directory every certificate of the node comes from [Let's Encrypt]")
    .option('--acme-ca-root <pem>', "PEM certificates the node trusts besides the system's: a private ACME CA's roots")
    .option('--acme-email <address>', 'the ACME account contact [hostmaster@<the domain of --name>]')
    .option('--address <ips>', "what DNS serves for this node's sites, comma-separated [its global addresses]")
    .option('--dns-server <server>', "the dns role's server: hostplane (its own, reading the store) or knot (a secondary of it, on a host of its own) [hostplane]", parseDnsServer)
    .option('--dns-primary <ip[:port]>', "with --dns-server knot: hostplane's DNS server it follows [the --store host's address, port 53]")
    .option('--set <NAME=value>', 'a setting written into /etc/hostplane/hostplane.env (repeatable; docs/operator-guide.md "Settings")', (v: string, all: string[]) => [...all, v], [])
    .action(async (o: SetupCliOptions) => {
      const parsed = parseRoles(o.roles);
      if ('unknown' in parsed) throw new CliError(`--roles: ${parsed.unknown.join(', ')} is not a role (roles: ${ROLES.join(', ')})`, 'invalid_input', 2);
      const { nodeSetup, SetupRefused } = await import('../node/setup.js');
      try {
        await nodeSetup({ roles: parsed.roles, name: o.name, store: o.store, acmeDirectory: o.acmeDirectory, acmeCaRoot: o.acmeCaRoot, acmeEmail: o.acmeEmail, addresses: o.address?.split(',').map((a) => a.trim()).filter(Boolean), set: o.set, dnsServer: o.dnsServer, dnsPrimary: o.dnsPrimary }, (line) => void io.stderr.write(`node setup: ${line}\n`));
      } catch (err) {
        if (err instanceof SetupRefused) throw new CliError(err.message, 'refused');
        throw new CliError(err instanceof Error ? err.message : String(err), 'setup_failed');
      }
    });
}

function certsCommand(io: CliIo): Command {
  return new Command('certs')
    .description("get or renew this node's own certificates as node setup planned them (/etc/hostplane/acme.json); what hostplane-certs.timer runs (root)")
    .option('--force', 'renew every certificate now, however long it is valid (a key to replace)')
    .action(async (o: { force?: boolean }) => {
      const { renewFromPlan } = await import('../node/certs.js');
      try {
        const changed = await renewFromPlan((line) => void io.stderr.write(`node certs: ${line}\n`), { force: o.force });
        output(io.stdout).text(changed.length ? `Renewed: ${changed.join(', ')}\n` : 'No certificate needed renewing.\n');
      } catch (err) {
        throw new CliError(err instanceof Error ? err.message : String(err), 'certs_failed');
      }
    });
}

async function render(io: CliIo, o: RenderOptions): Promise<void> {
  const facts = readFacts(o);
  if (!fs.statSync(o.out, { throwIfNoEntry: false })?.isDirectory()) {
    throw new CliError(`--out: ${o.out} is not a directory; create it first.`, 'invalid_input', 2);
  }
  const files = mailFiles(facts, o.profile);
  let written;
  try {
    const placed = await placeFiles(files.map((f) => ({ ...f, path: path.join(o.out, f.path) })));
    written = files.map((f, i) => ({ path: f.path, mode: f.mode, group: f.group, changed: placed[i] === 'written' }));
  } catch (err) {
    throw new CliError(`could not write the files under ${o.out}: ${(err as Error).message}`);
  }
  const out = output(io.stdout);
  if (o.json) return out.json(written);
  const changed = written.filter((w) => w.changed);
  out.text(`${changed.length ? `Wrote ${changed.length} of ${written.length} files` : `All ${written.length} files were up to date`} under ${o.out}:\n`);
  for (const w of written) out.text(`  ${w.path} (${w.mode.toString(8).padStart(4, '0')} ${w.group})${w.changed ? '' : ' unchanged'}\n`);
}

async function renderKnot(io: CliIo, o: KnotOptions): Promise<void> {
  const text = knotConf(checkedFacts(o.facts, readKnotInput, 'knot.conf'));
  const out = path.resolve(o.out);
  if (!fs.statSync(path.dirname(out), { throwIfNoEntry: false })?.isDirectory()) {
    throw new CliError(`--out: ${path.dirname(out)} is not a directory; create it first.`, 'invalid_input', 2);
  }
  let changed: boolean;
  try {
    // The key's secret is in it: for its owner alone.
    changed = (await placeFile({ path: out, text, mode: 0o600 })) === 'written';
  } catch (err) {
    throw new CliError(`could not write ${out}: ${(err as Error).message}`);
  }
  if (o.json) return output(io.stdout).json({ path: out, changed });
  output(io.stdout).text(changed ? `Wrote ${out}\n` : `${out} was up to date\n`);
}

function readFacts(o: RenderOptions) {
  return o.profile === 'private'
    ? privateFacts(checkedFacts(o.facts, readPrivateInput, `profile ${o.profile}`))
    : systemFacts(checkedFacts(o.facts, readSystemInput, `profile ${o.profile}`));
}

/** The facts file (given as `option`) read as JSON and checked by `read`; exit 2 naming every problem. */
function checkedFacts<T>(file: string, read: (value: unknown) => T, what: string, option = '--facts'): T {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError(`${option}: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, 'invalid_input', 2);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new CliError(`${option}: ${file} is not JSON: ${(err as Error).message}`, 'invalid_input', 2);
  }
  try {
    return read(value);
  } catch (err) {
    if (!(err instanceof FactsError)) throw err;
    throw new CliError(`invalid facts in ${file} (${what}):\n  - ${err.problems.join('\n  - ')}`, 'invalid_facts', 2);
  }
}
