// A write's answer shows the state that write produced (docs/decisions/0004-provisioning-seams.md
// "The write path"): under parallel writes of one resource, every PATCH answer carries the values
// of its own request, never another's. On PostgreSQL the re-read used to run outside the update's
// transaction and showed a later write.
import { describe, expect, it } from 'vitest';
import { ENGINES, call } from '../helpers/app.js';
import { useDomains } from '../helpers/domains.js';
import { nowIso } from '../../src/db/time.js';
import { DatabaseServersRepository } from '../../src/provisioning/databases/servers.repository.js';
import { DatabasesRepository } from '../../src/resources/databases/databases.repository.js';
import { WebServersRepository } from '../../src/provisioning/web/servers.repository.js';
import { patchEmail, placeholderMailServer, postEmail } from '../helpers/email.js';

const PARALLEL = 20;

describe.each(ENGINES)('read-your-writes on %s', (engine) => {
  const { t, x, patch } = useDomains(engine);

  it(`${PARALLEL} parallel PATCH /customers/{id}: each answer shows the external_customer_id it wrote`, async () => {
    const id = x.end2.customerId;
    const sent = Array.from({ length: PARALLEL }, (_, i) => `parallel-${i}`);
    const answers = await Promise.all(
      sent.map((ext, i) =>
        call(t.app, 'PATCH', `/customers/${id}`, {
          token: x.reseller.token,
          body: { data: { type: 'customer', id, attributes: { external_customer_id: ext, is_login_disabled: i % 2 === 1 } } },
        }),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual(sent.map(() => 200));
    expect(answers.map((r) => r.json.data.attributes.external_customer_id)).toEqual(sent);
    expect(answers.map((r) => r.json.data.attributes.is_login_disabled)).toEqual(sent.map((_, i) => i % 2 === 1));
    // The stored value is one of them (the last to commit), and a read shows it.
    const now = await call(t.app, 'GET', `/customers/${id}`, { token: x.reseller.token });
    expect(sent).toContain(now.json.data.attributes.external_customer_id);
  });

  it(`${PARALLEL} parallel PATCH /databases/{id}: each answer shows the description it wrote`, async () => {
    // A database row as POST /databases stores it; no worker runs, so no server is contacted.
    await new DatabaseServersRepository(t.store.db).add({
      name: 'ryw', db_type: 'mariadb', version: '10.11', url: 'mysql://admin@127.0.0.1:9', access_hosts: '["%"]', is_default: 1, is_dedicated: 0, created_at: nowIso(),
    });
    const id = String(
      (await new DatabasesRepository(t.store.db).insert({
        customer_id: Number(x.end1.customerId), package_id: Number(x.end1.packageId), server_name: 'ryw', db_type: 'mariadb', version: '10.11', name: 'u_ryw_1', description: '',
      })).id,
    );
    const sent = Array.from({ length: PARALLEL }, (_, i) => `parallel ${i}`);
    const answers = await Promise.all(
      sent.map((description) =>
        call(t.app, 'PATCH', `/databases/${id}`, { token: x.end1.token, body: { data: { type: 'database', id, attributes: { description } } } }),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual(sent.map(() => 200));
    expect(answers.map((r) => r.json.data.attributes.description)).toEqual(sent);
  });

  it(`${PARALLEL} parallel PATCH /subdomains/{id}: each 202 shows the target and description it wrote`, async () => {
    // A web server to place the package on; no worker runs, so it is never contacted.
    await new WebServersRepository(t.store.db).add({
      name: 'ryw', caddy_admin: 'http://127.0.0.1:9', http_listen: '127.0.0.1:80', https_listen: null, addresses: '["192.0.2.10"]',
      home_root: '/srv/www', state_dir: '/srv/www/.hostplane', php: '{}', is_default: 1, created_at: nowIso(),
    });
    const made = await call(t.app, 'POST', '/subdomains', {
      token: x.end1.token,
      body: { data: { type: 'subdomain', attributes: { subdomain_type: 'redirect', domain: x.end1.domain, subdomain: 'ryw', redirect: { target: 'https://t.example/' } } } },
    });
    expect(made.status, made.body).toBe(202);
    const id = made.json.data.id;
    const sent = Array.from({ length: PARALLEL }, (_, i) => i);
    const answers = await Promise.all(
      sent.map((i) =>
        call(t.app, 'PATCH', `/subdomains/${id}`, {
          token: x.end1.token,
          body: { data: { type: 'subdomain', id, attributes: { description: `parallel ${i}`, redirect: { target: `https://t${i}.example/` } } } },
        }),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual(sent.map(() => 202));
    expect(answers.map((r) => [r.json.data.attributes.description, r.json.data.attributes.redirect.target])).toEqual(sent.map((i) => [`parallel ${i}`, `https://t${i}.example/`]));
  });

  it(`${PARALLEL} parallel PATCH /email-addresses/{id}: each answer shows the description and antispam mode it wrote`, async () => {
    // A mail server to place the package on; no worker runs, so it is never contacted.
    await placeholderMailServer(t.store, 'ryw');
    const made = await postEmail(t, x.end1.token, { address: `ryw@${x.end1.domain}`, address_type: 'mailbox' });
    expect(made.status, made.body).toBe(202);
    const id = made.json.data.id;
    const modes = ['reject', 'junk-folder', 'subject-rewrite', 'none'];
    const sent = Array.from({ length: PARALLEL }, (_, i) => ({ description: `parallel ${i}`, antispam: modes[i % modes.length] }));
    const answers = await Promise.all(sent.map((attributes) => patchEmail(t, x.end1.token, id, attributes)));
    expect(answers.map((r) => r.status)).toEqual(sent.map(() => 200));
    expect(answers.map((r) => ({ description: r.json.data.attributes.description, antispam: r.json.data.attributes.antispam }))).toEqual(sent);
  });

  it(`${PARALLEL} parallel PATCH /domains/{name}: each answer shows the presence flags it wrote`, async () => {
    const flags = Array.from({ length: PARALLEL }, (_, i) => ({ dns_update_lock: i % 2 === 1, dns_migration_mode: { enabled: i % 4 >= 2 } }));
    const answers = await Promise.all(
      flags.map((presence) => patch('flags.example', { type: 'domain', id: 'flags.example', attributes: { presence } })),
    );
    expect(answers.map((r) => r.status)).toEqual(flags.map(() => 200));
    expect(answers.map((r) => r.json.data.attributes.presence)).toEqual(flags.map((f) => ({ ...f, dnssec: { enabled: false, state: 'unsigned', ds_records: [], dnskeys: [] } })));
  });
});
