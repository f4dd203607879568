// Servers registered only, for tests that run no worker: a default MariaDB 10.11, web and mail
// server, so POSTs can place databases, subdomains, SSH keys and addresses; nobody talks to them.
import { nowIso } from '../../src/db/time.js';
import { DatabaseServersRepository } from '../../src/provisioning/databases/servers.repository.js';
import { WebServersRepository } from '../../src/provisioning/web/servers.repository.js';
import type { TestApp } from './app.js';
import { placeholderMailServer } from './email.js';

/** `await placeholderServers(t)`: db1 (mariadb 10.11), web1 and mx-test, each the default of its kind. */
export async function placeholderServers(t: Pick<TestApp, 'store'>): Promise<void> {
  await new DatabaseServersRepository(t.store.db).add({
    name: 'db1', db_type: 'mariadb', version: '10.11', url: 'mysql://admin@127.0.0.1:9', access_hosts: '["%"]', is_default: 1, is_dedicated: 0, created_at: nowIso(),
  });
  await new WebServersRepository(t.store.db).add({
    name: 'web1', caddy_admin: 'http://127.0.0.1:9', http_listen: '127.0.0.1:9', https_listen: null, addresses: '["192.0.2.10"]',
    home_root: '/srv/www', state_dir: '/srv/www/.hostplane', php: '{}', is_default: 1, created_at: nowIso(),
  });
  await placeholderMailServer(t.store);
}
