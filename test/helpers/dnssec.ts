// The real DNSSEC tools of the signing tests (docs/decisions/0032-dnssec.md): a zone taken by AXFR
// with dig, checked by ldns-verify-zone (ldnsutils) and kzonecheck (knot-dnssecutils), and answers
// validated by delv (bind9-dnsutils) with the zone's DS as its trust anchor.
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { TestKey } from './secondaries.js';

const run = promisify(execFile);
const TOOLS: [string, string][] = [['dig', 'dnsutils'], ['delv', 'bind9-dnsutils'], ['ldns-verify-zone', 'ldnsutils'], ['kzonecheck', 'knot-dnssecutils']];

/** Why the DNSSEC tool tests cannot run here, or null: `requirable(dnssecToolsMissing())(…)`. */
export function dnssecToolsMissing(): string | null {
  const missing = TOOLS.filter(([bin]) => {
    try {
      execFileSync('sh', ['-c', `command -v ${bin}`], { stdio: 'ignore' });
      return false;
    } catch {
      return true;
    }
  });
  if (!missing.length) return null;
  const reason = `${missing.map(([b]) => b).join(', ')} not installed (apt-get install ${missing.map(([, p]) => p).join(' ')}; .ci/run does it): the DNSSEC tool tests are skipped`;
  console.warn(reason);
  return reason;
}

/** A private directory for the tools' files. */
export const toolDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'dnssec-'));

/** The zone `zone` as dig prints an AXFR of it with `key` (TSIG): one record a line, comments dropped. */
export async function axfrText(port: number, zone: string, key: TestKey): Promise<string> {
  const { stdout } = await run('dig', ['@127.0.0.1', '-p', String(port), '+time=2', '+tries=1', '+nocmd', '+nostats', '+nocomments', '-y', `hmac-sha256:${key.name}:${key.secret}`, zone, 'AXFR']);
  if (/Transfer failed|; communications error/.test(stdout)) throw new Error(`AXFR of ${zone} failed:\n${stdout}`);
  // TSIG records dig prints after each message are no part of the zone.
  return stdout.split('\n').filter((l) => l.trim() && !l.startsWith(';') && !/\sTSIG\s/.test(l)).join('\n') + '\n';
}

export interface ToolResult {
  ok: boolean;
  output: string;
}

async function tool(cmd: string, args: string[]): Promise<ToolResult> {
  try {
    const { stdout, stderr } = await run(cmd, args);
    return { ok: true, output: stdout + stderr };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}` || e.message };
  }
}

/** ldns-verify-zone over the zone text (every signature, the NSEC chain, the DNSKEY). */
export async function ldnsVerify(text: string, dir: string): Promise<ToolResult> {
  const file = path.join(dir, 'ldns.zone');
  fs.writeFileSync(file, text);
  return tool('ldns-verify-zone', [file]);
}

/** kzonecheck --dnssec on over the zone text. */
export async function kzonecheck(text: string, zone: string, dir: string): Promise<ToolResult> {
  const file = path.join(dir, 'knot.zone');
  fs.writeFileSync(file, text);
  return tool('kzonecheck', ['--dnssec', 'on', '-o', zone, file]);
}

/**
 * `delv` asking our server, with `ds` (`<tag> <alg> 2 <hex>`) of `zone` as its only trust anchor:
 * its output (`; fully validated` on success).
 */
export async function delv(port: number, dir: string, zone: string, ds: string, name: string, type: string): Promise<ToolResult> {
  const [tag, alg, digestType, digest] = ds.split(' ');
  const anchors = path.join(dir, 'anchors.conf');
  fs.writeFileSync(anchors, `trust-anchors {\n  ${zone}. static-ds ${tag} ${alg} ${digestType} "${digest}";\n};\n`);
  return tool('delv', ['@127.0.0.1', '-p', String(port), '-a', anchors, `+root=${zone}`, '+nortrace', name, type]);
}
