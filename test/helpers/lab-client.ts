// A customer of the lab (decision 0018 "The lab"), from its client namespace: the API over HTTPS
// with the lab's CA, jobs waited for, names resolved by the lab's DNS. Every call is a real client
// program run in that namespace (curl, dig, mariadb), as people would run them.
import fs from 'node:fs';
import path from 'node:path';
import type { Lab, LabHost } from './lab.js';

export interface LabJson {
  ca: string;
  acme: string;
  resolver: string;
  client_netns: string;
  shape: 'company' | 'one-server';
  dns: string;
  /** The company's Knot secondary (ns2); absent on one server. */
  dns_secondary?: string;
  api: string;
  hosts: Partial<Record<LabHost, string>>;
  /** The lab host of each role. */
  role_hosts: Record<'api' | 'dns' | 'web' | 'mail' | 'db', LabHost>;
  mail: { host: string; smtp: number; imap: number; imaps: number };
  db: { host: string; port: number };
  demo: string;
}

export interface DemoCustomer {
  id: string;
  role: string;
  token: string;
  package_id: string;
  domain: string;
}

export const labJson = (lab: Lab): LabJson => JSON.parse(fs.readFileSync(path.join(lab.dir, 'lab.json'), 'utf8')) as LabJson;
export const demoCustomers = (j: LabJson): DemoCustomer[] => (JSON.parse(fs.readFileSync(j.demo, 'utf8')) as { customers: DemoCustomer[] }).customers;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function labClient(lab: Lab) {
  const j = labJson(lab);
  const apiHost = new URL(j.api).hostname;
  const resolve = (host: string, port: number, address: string) => ['--resolve', `${host}:${port}:${address}`];
  /** The address of the lab host that serves `role`. */
  const at = (role: keyof LabJson['role_hosts']) => j.hosts[j.role_hosts[role]]!;

  /** One API request: status, headers' Location, parsed body. */
  const api = (method: string, p: string, token: string, body?: unknown) => {
    const args = ['-s', '-X', method, '--cacert', j.ca, ...resolve(apiHost, 443, at('api')), '-H', `Authorization: token ${token}`, '-w', '\n%{http_code}'];
    if (body !== undefined) args.push('-H', 'Content-Type: application/vnd.api+json', '--data-binary', JSON.stringify(body));
    const r = lab.client('curl', [...args, `${j.api}${p}`]);
    const lines = r.stdout.split('\n');
    const status = Number(lines.pop());
    const text = lines.join('\n');
    return { status, body: text ? (JSON.parse(text) as Record<string, any>) : null, stderr: r.stderr };
  };

  /** Waits for the job of a 202 answer; its final document. */
  const job = async (answer: { body: Record<string, any> | null }, token: string, timeoutMs = 180_000) => {
    const link: string = answer.body?.links?.['queue-job'] ?? answer.body?.data?.links?.['queue-job'];
    if (!link) throw new Error(`no queue-job link in ${JSON.stringify(answer.body)}`);
    const until = Date.now() + timeoutMs;
    for (;;) {
      const r = api('GET', link.slice(j.api.length), token);
      const status = r.body?.data?.attributes?.status;
      if (status === 'done' || status === 'failed' || Date.now() > until) return r.body!;
      await sleep(1000);
    }
  };

  /** `dig @<server> name type +short` from the client: hostplane's DNS unless another server is named. */
  const dig = (name: string, type: string, server = j.dns) => lab.client('dig', [`@${server}`, name, type, '+short', '+time=2', '+tries=2']).stdout.trim();

  return { j, api, job, dig, resolve, at };
}
