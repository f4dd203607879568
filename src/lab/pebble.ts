// Pebble, the lab's ACME CA (decision 0018 "The lab"), on the bridge address: its directory at
// https://198.18.0.1:14000/dir, validating HTTP-01 and TLS-ALPN-01 on the hosts' standard ports
// through the lab's resolver. Its HTTPS uses a leaf of a small CA made here with openssl;
// <dir>/ca/lab-root.pem holds Pebble's issuing root and that CA, so trusting the one file trusts
// both the directory and every certificate Pebble issues.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { inBridge, startInBridge, waitService } from './bridge.js';
import { ACME_MANAGEMENT_PORT, ACME_NAME, ACME_PORT, acmeDirectoryUrl, BRIDGE_ADDRESS, type Names } from './plan.js';
import { LabError, must } from './proc.js';
import { RESOLVER_PORT } from './resolver.js';
import { record, type LabState } from './state.js';

export const caDir = (dir: string) => path.join(dir, 'ca');
export const labRootPath = (dir: string) => path.join(caDir(dir), 'lab-root.pem');

/** The small CA ("hostplane lab ACME server CA") and its leaf for Pebble's own HTTPS. */
async function makeServerCa(ca: string): Promise<void> {
  const f = (name: string) => path.join(ca, name);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await must('openssl', [
    'req', '-x509', ...ec, '-days', '365', '-subj', '/CN=hostplane lab ACME server CA', '-keyout', f('ca.key'), '-out', f('ca.pem'),
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  await must('openssl', ['req', '-new', ...ec, '-subj', `/CN=${ACME_NAME}`, '-keyout', f('acme.key'), '-out', f('acme.csr')]);
  fs.writeFileSync(
    f('acme.ext'),
    `subjectAltName=IP:${BRIDGE_ADDRESS},DNS:${ACME_NAME}\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n`,
  );
  await must('openssl', [
    'x509', '-req', '-in', f('acme.csr'), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-set_serial', `0x${crypto.randomBytes(12).toString('hex')}`,
    '-days', '365', '-extfile', f('acme.ext'), '-out', f('acme.pem'),
  ]);
}

/**
 * Makes the CA, starts Pebble and waits for its directory; writes lab-root.pem and returns it.
 * Pebble makes a new issuing root each time it starts: the file belongs to this run of the lab.
 */
export async function startPebble(state: LabState, n: Names): Promise<string> {
  const ca = caDir(state.dir);
  record(state, 'paths', ca);
  fs.mkdirSync(ca, { recursive: true });
  await makeServerCa(ca);
  const config = path.join(ca, 'pebble.json');
  const pebble = {
    listenAddress: `${BRIDGE_ADDRESS}:${ACME_PORT}`,
    managementListenAddress: `${BRIDGE_ADDRESS}:${ACME_MANAGEMENT_PORT}`,
    certificate: path.join(ca, 'acme.pem'),
    privateKey: path.join(ca, 'acme.key'),
    httpPort: 80,
    tlsPort: 443,
    ocspResponderURL: '',
    externalAccountBindingRequired: false,
  };
  fs.writeFileSync(config, `${JSON.stringify({ pebble }, null, 2)}\n`);
  // No sleeps before validating and no random bad-nonce rejections: tests stay fast and deterministic.
  const env = { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0' };
  startInBridge(state, n, 'pebble', ['pebble', '-config', config, '-dnsserver', `${BRIDGE_ADDRESS}:${RESOLVER_PORT}`], env);
  const caPem = path.join(ca, 'ca.pem');
  const curl = (url: string) => inBridge(n, ['curl', '-sf', '--max-time', '5', '--cacert', caPem, url]);
  await waitService(state, 'pebble', async () => (await curl(acmeDirectoryUrl())).code === 0, 30_000);
  const root = await curl(`https://${BRIDGE_ADDRESS}:${ACME_MANAGEMENT_PORT}/roots/0`);
  if (root.code !== 0 || !root.stdout.startsWith('-----BEGIN CERTIFICATE-----')) {
    throw new LabError(`Pebble did not give its root at /roots/0 (curl exit ${root.code}): ${(root.stderr || root.stdout).trim()}`);
  }
  const pem = `${root.stdout.trim()}\n${fs.readFileSync(caPem, 'utf8').trim()}\n`;
  fs.writeFileSync(labRootPath(state.dir), pem);
  return pem;
}
