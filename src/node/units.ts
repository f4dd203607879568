// hostplane's systemd units on a node (deploy/systemd/): installed into /etc/systemd/system with the
// paths of the hostplane that runs `node setup`, and its version in a comment, so a newer hostplane
// rewrites them and the setup restarts what runs (decision 0018 "One command per node": upgrades).
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { placeFile } from './files.js';
import { run } from './system.js';

/** The installed package: dist/node/units.js (or src/node/units.ts) is two levels below it. */
export const packageDir = () => path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const UNIT_DIR = '/etc/systemd/system';

async function packageVersion(): Promise<string> {
  return (JSON.parse(await fs.readFile(path.join(packageDir(), 'package.json'), 'utf8')) as { version: string }).version;
}

/** A unit of deploy/systemd as this host runs it: node and the package where they are here. */
export function unitText(template: string, o: { node: string; pkg: string; version: string }): string {
  const body = template.replaceAll('/usr/bin/node /opt/hostplane/dist/main.js', `${o.node} ${o.pkg}/dist/main.js`).replaceAll('file:/opt/hostplane/', `file:${o.pkg}/`);
  return `# Installed by hostplane node setup from hostplane ${o.version}; replaced on its next run.\n${body}`;
}

/** Installs every unit of deploy/systemd; true when one changed (systemd has re-read them then). */
export async function installUnits(): Promise<boolean> {
  const pkg = packageDir();
  const source = path.join(pkg, 'deploy/systemd');
  const version = await packageVersion();
  let changed = false;
  for (const name of (await fs.readdir(source)).filter((n) => /\.(service|timer)$/.test(n)).sort()) {
    const text = unitText(await fs.readFile(path.join(source, name), 'utf8'), { node: process.execPath, pkg, version });
    if ((await placeFile({ path: path.join(UNIT_DIR, name), text, mode: 0o644 })) === 'written') changed = true;
  }
  const sysusers = await fs.readFile(path.join(source, 'hostplane.sysusers.conf'), 'utf8');
  if ((await placeFile({ path: '/etc/sysusers.d/hostplane.conf', text: sysusers, mode: 0o644 })) === 'written') {
    await run('systemd-sysusers', ['/etc/sysusers.d/hostplane.conf']);
  }
  if (changed) await run('systemctl', ['daemon-reload']);
  return changed;
}

/** A drop-in of a Debian unit (`caddy.service.d/hostplane.conf`); true when it changed (re-read then). */
export async function placeDropIn(unit: string, text: string): Promise<boolean> {
  const written = (await placeFile({ path: path.join(UNIT_DIR, `${unit}.d`, 'hostplane.conf'), text, mode: 0o644 })) === 'written';
  if (written) await run('systemctl', ['daemon-reload']);
  return written;
}
