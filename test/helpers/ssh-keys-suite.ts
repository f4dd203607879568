// What the /ssh-keys tests share (API guide "SSH keys"): an app with the worker of a registered web
// server (WEB_SERVER, as `serve` on a single machine), whose key files live in a temp dir, and the
// standard tenants. Key jobs touch only the key files, so no Caddy runs; the reconciler's periodic
// push to Caddy is set far apart.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { call, createTestApp, type EngineName, type TestApp } from './app.js';
import { seedTenants, type Tenants } from './tenants.js';
import { WebServersService } from '../../src/admin/web-servers.service.js';
import { authorizedKeysPath } from '../../src/provisioning/web/ssh-keys.js';

export const WEB = 'web1';

export interface SshKeysSuite {
  t: TestApp;
  x: Tenants;
  /** The web server's state dir (key files under ssh/authorized_keys/). */
  stateDir: string;
  /** The key file of `linuxUser` as sshd would read it: its lines, or null when there is none. */
  keyFile(linuxUser: string): Promise<string[] | null>;
}

export function useSshKeysSuite(engine: EngineName): SshKeysSuite {
  const s = {} as SshKeysSuite;
  let root = '';
  beforeAll(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'hostplane-ssh-'));
    s.stateDir = path.join(root, 'state');
    s.t = await createTestApp(engine, { WEB_SERVER: WEB, JOB_POLL_MS: '50' }, { worker: true, reconcileMs: 3_600_000 });
    await new WebServersService(s.t.store.db).add({
      name: WEB, caddyAdmin: 'http://127.0.0.1:9', httpListen: '127.0.0.1:9', addresses: ['192.0.2.10', '2001:db8::10'], homeRoot: path.join(root, 'www'), stateDir: s.stateDir,
    });
    s.x = await seedTenants(s.t.admin);
    s.keyFile = async (linuxUser) => {
      try {
        return (await fs.readFile(authorizedKeysPath({ stateDir: s.stateDir }, linuxUser), 'utf8')).split('\n').filter(Boolean);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw e;
      }
    };
  }, 60_000);
  afterAll(async () => {
    await s.t?.close();
    if (root) await fs.rm(root, { recursive: true, force: true });
  });
  return s;
}

/** POST /ssh-keys as `token`. */
export const postSshKey = (t: TestApp, token: string, attributes: Record<string, unknown>) =>
  call(t.app, 'POST', '/ssh-keys', { token, body: { data: { type: 'ssh-key', attributes } } });
