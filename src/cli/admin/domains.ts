// `hostplane admin domain …`: domains registered with the service, used in a package (presence),
// or both (API guide "Domains").
import type { DnssecStatus } from '../../admin/dnssec.service.js';
import { Command } from 'commander';
import { aceOf } from '../../domain-name.js';
import { parseId, withStore, type CliIo } from '../context.js';
import { domainView, leaf, listLeaf, printList, printResult, type Json } from './views.js';

/** A domain name as given (Unicode or ACE), in ACE; a name that is none is refused by the service's lookup. */
const ace = (name: string) => aceOf(name) ?? name;
const dkimView = (k: { selector: string; state: string; retire_at: string | null; created_at: string }) => ({
  selector: k.selector, state: k.state, retire_at: k.retire_at, created_at: k.created_at,
});

export function domainCommand(io: CliIo): Command {
  const domain = new Command('domain').description('domains: registered with the service, used in a package (presence), or both');
  leaf(domain.command('create').description('add a domain'))
    .requiredOption('--name <domain>', 'domain name (Unicode or ACE)')
    .requiredOption('--customer <id>', 'owner', parseId)
    .option('--package <id>', 'use it in this package of the owner (presence)', parseId)
    .option('--registered', 'registered with the service (expires in one year)')
    .action((o: Json & { name: string; customer: number; package?: number; registered?: boolean }) =>
      withStore(io, async ({ admin, out }) => {
        const { domain: name } = await admin.domains.createDomain({ name: o.name, customerId: o.customer, packageId: o.package ?? null, registered: o.registered ?? false });
        const d = domainView(await admin.domains.domain(name));
        const parts = [d.registered && 'registered', d.presence && `in package ${d.package_id}`].filter(Boolean).join(', ');
        printResult(out, o, d, `Created domain ${d.id} (${parts}).\n`);
      }),
    );
  listLeaf(domain, io, 'list domains', async (admin) => (await admin.domains.listDomains()).map(domainView), [
    'id', 'name', 'customer_id', 'package_id', 'registered', 'presence', 'expires_at',
  ]);
  dkimCommands(domain, io);
  domain.addCommand(dnssecCommand(io));
  return domain;
}

/** DNSSEC of a presence domain (docs/decisions/0032-dnssec.md): on, off, rollover, what the registry needs. */
function dnssecCommand(io: CliIo): Command {
  const dnssec = new Command('dnssec').description("sign a domain's zone with DNSSEC, roll its key over, serve it unsigned again, or show its DS records");
  const lines = (s: DnssecStatus) =>
    [
      `${s.domain}: DNSSEC ${s.enabled ? 'on' : 'off'}${s.choice === 'default' ? ' (DNS_DNSSEC)' : ''}${s.state === 'signed' || s.state === 'unsigned' ? '' : `, ${s.state}`}`,
      ...s.ds_records.map((d) => `DS ${d}`),
      ...s.dnskeys.map((k) => `DNSKEY ${k}`),
      ...(s.awaiting === null ? [] : [awaitingLine(s.awaiting)]),
    ].join('\n') + '\n';
  leaf(dnssec.command('status').description('show whether the zone is signed, its DS records for the registry, its DNSKEYs and what a rollover or disabling waits for'))
    .argument('<domain>', 'domain name (Unicode or ACE)')
    .action((name: string, o: Json) => withStore(io, async ({ admin, out }) => {
      const s = await admin.dnssec.status(ace(name));
      printResult(out, o, s, lines(s));
    }));
  for (const [verb, on] of [['enable', true], ['disable', false]] as const) {
    const help = on
      ? 'sign the zone (a key is made); then give the registry the DS records shown'
      : 'turn DNSSEC off: the zone stays signed with CDS/CDNSKEY asking the parent to drop the DS, and is served unsigned once the DS is gone and its TTL has passed';
    leaf(dnssec.command(verb).description(help))
      .argument('<domain>', 'domain name (Unicode or ACE)')
      .action((name: string, o: Json) => withStore(io, async ({ admin, out }) => {
        const { status, changeId } = await admin.dnssec.set(ace(name), on);
        const then = on ? 'serve it signed' : status.state === 'disabling' ? 'publish the delete form of CDS/CDNSKEY' : 'serve it unsigned';
        printResult(out, o, { ...status, change_id: changeId }, `${lines(status)}The DNS servers ${then} once they have applied change ${changeId}.\n`);
      }));
  }
  leaf(dnssec.command('rollover').description("roll the zone's key over (RFC 7583 double signature): the new key is published and signs beside the old; CDS names it; the old goes once the parent's DS names the new one"))
    .argument('<domain>', 'domain name (Unicode or ACE)')
    .action((name: string, o: Json) => withStore(io, async ({ admin, out }) => {
      const { status, changeId } = await admin.dnssec.rollover(ace(name));
      printResult(out, o, { ...status, change_id: changeId }, `${lines(status)}The DNS servers publish the new key once they have applied change ${changeId}.\n`);
    }));
  leaf(dnssec.command('ds-seen').description("confirm that the parent now holds the DS the zone's CDS asks for (or none, while disabling), when DNS_DNSSEC_PARENT is not set"))
    .argument('<domain>', 'domain name (Unicode or ACE)')
    .action((name: string, o: Json) => withStore(io, async ({ admin, out }) => {
      const s = await admin.dnssec.dsSeen(ace(name));
      printResult(out, o, s, lines(s));
    }));
  return dnssec;
}

/** What a zone's DNSSEC lifecycle waits for, in words. */
function awaitingLine(a: NonNullable<DnssecStatus['awaiting']>): string {
  if (a.kind === 'time') return `Next step at ${a.until}.`;
  return a.ds === 'none'
    ? 'Awaiting the parent: no DS any more (DNS_DNSSEC_PARENT is asked, or confirm with ds-seen).'
    : `Awaiting the parent: DS ${a.ds} (DNS_DNSSEC_PARENT is asked, or confirm with ds-seen).`;
}

/** DKIM keys of a domain (API guide "Sending mail"): show, rotate, and what sends unsigned. */
function dkimCommands(domain: Command, io: CliIo) {
  leaf(domain.command('dkim').description("show a domain's DKIM keys: selector, state (publishing, signing, retiring) and when a retiring one goes"))
    .argument('<domain>', 'domain name (Unicode or ACE)')
    .action((name: string, o: Json) =>
      withStore(io, async ({ admin, out }) => printList(out, o, (await admin.dkim.keys(ace(name))).map(dkimView), ['selector', 'state', 'retire_at', 'created_at'])),
    );
  leaf(domain.command('dkim-rotate').description('rotate the DKIM key: a new selector is published, signs once every DNS server serves it, and the old one goes after its TTL'))
    .argument('<domain>', 'domain name (Unicode or ACE)')
    .action((name: string, o: Json) =>
      withStore(io, async ({ admin, out }) => {
        const { key, job } = await admin.dkim.rotate(ace(name));
        printResult(out, o, { ...dkimView(key), job_id: job.id },
          `Publishing selector ${key.selector} for ${key.domain} (job ${job.id}): mail is signed with it once every DNS server serves ${key.selector}._domainkey; the old selector's record goes one TTL later.\n`);
      }),
    );
  leaf(domain.command('dkim-unsigned').description('list the domains with e-mail addresses whose mail leaves unsigned, and why'))
    .action((o: Json) => withStore(io, async ({ admin, out }) => printList(out, o, (await admin.dkim.unsigned()).map((u) => ({ ...u })), ['domain', 'reason'])));
}
