// hostplane inside the lab's hosts (decision 0018 "The lab": "hostplane from this checkout's
// `npm pack` with its dependencies installed beside it"). The tarball is installed on THIS machine
// (its registry access, its compilers) into a directory laid out as the hosts' /usr/local, which
// the hosts' overlays stack above the root filesystem: nothing is copied, no host needs a registry.
// This machine's Node 20 and trixie's share the module ABI (115), so the native addons
// (better-sqlite3, native/udp-batch) built here load there.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CACHE_DIR } from './plan.js';
import { LabError, must, procRef, publish } from './proc.js';

/** The checkout this code runs from (src/lab or dist/lab, two levels below package.json). */
export const checkoutDir = () => path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** What the copy that is packed leaves out: dependencies (linked instead), builds, git's store. */
const LEFT_OUT = new Set(['node_modules', 'dist', '.git', 'native/udp-batch/build']);

/** Where the layer's package lives, as the hosts see it. */
export const HOST_PACKAGE_DIR = '/usr/local/lib/node_modules/hostplane';

/** Layers of earlier checkouts that no mounted host uses any more (a running lab keeps its own). */
function removeUnusedLayers(): void {
  const parent = path.join(CACHE_DIR, 'hostplane');
  const mounts = fs.readFileSync('/proc/self/mounts', 'utf8');
  for (const entry of fs.existsSync(parent) ? fs.readdirSync(parent) : []) {
    if (/^[0-9a-f]{12}$/.test(entry) && !mounts.includes(path.join(parent, entry))) fs.rmSync(path.join(parent, entry), { recursive: true, force: true });
  }
}

/**
 * The layer holding this checkout's hostplane installed with its dependencies, built if missing.
 * Keyed by the tarball's hash: a changed checkout gets a new layer, an unchanged one reuses it.
 */
export async function ensureHostplaneLayer(log: (line: string) => void): Promise<string> {
  const checkout = checkoutDir();
  if (!fs.existsSync(path.join(checkout, 'tsconfig.json'))) throw new LabError(`${checkout} is not a hostplane checkout (no tsconfig.json): the lab packs hostplane from a checkout`);
  const tmp = fs.mkdtempSync('/tmp/hp-lab-pack-');
  try {
    log(`packing hostplane (npm pack of a copy of ${checkout})`);
    // `npm pack` runs `prepare` (the native addon, the TypeScript and panel builds), which empties
    // dist/ for a while: done in a copy, so a server or tests running from the checkout keep theirs.
    const copy = path.join(tmp, 'checkout');
    fs.cpSync(checkout, copy, { recursive: true, filter: (p) => !LEFT_OUT.has(path.relative(checkout, p)) });
    fs.symlinkSync(path.join(checkout, 'node_modules'), path.join(copy, 'node_modules'));
    // It prints the tarball's file name last.
    const out = await must('npm', ['pack', '--silent', '--pack-destination', tmp], { cwd: copy });
    const tarball = path.join(tmp, out.trim().split('\n').pop()!);
    const sha = crypto.createHash('sha256').update(fs.readFileSync(tarball)).digest('hex').slice(0, 12);
    const final = path.join(CACHE_DIR, 'hostplane', sha);
    if (fs.existsSync(final)) return final;
    removeUnusedLayers();
    const me = procRef(process.pid);
    const build = path.join(CACHE_DIR, 'hostplane', `.build-${sha}-${me.pid}-${me.start}`);
    fs.rmSync(build, { recursive: true, force: true });
    fs.mkdirSync(build, { recursive: true });
    log(`installing it with its dependencies into ${final} (once per checkout change)`);
    await must('npm', ['install', '--global', '--prefix', path.join(build, 'usr/local'), '--no-audit', '--no-fund', '--loglevel=error', tarball]);
    // The tarball carries the addon's source, not its build (ignored by git): built here for the hosts.
    const pkg = path.join(build, HOST_PACKAGE_DIR);
    await must('npm', ['run', '--silent', 'build:native'], { cwd: pkg });
    if (!fs.existsSync(path.join(pkg, 'native/udp-batch/build/Release/udp_batch.node'))) throw new LabError('native/udp-batch did not build (see `npm run build:native`)');
    publish(build, final);
    return final;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
