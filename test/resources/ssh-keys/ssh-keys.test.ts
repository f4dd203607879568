// /ssh-keys through HTTP (API guide "SSH keys"): the 202 answers with the key and its job, jobs that
// are done only when the package's key file on its web server holds exactly its keys, DELETE and
// its repeat, refusals that store nothing, duplicates and the plan's limit, tenancy, filters, and
// last_used_at as the sshd log follower reports logins.
import { describe, expect, it } from 'vitest';
import { BASE, ENGINES, call, createTestApp } from '../../helpers/app.js';
import { seedTenants } from '../../helpers/tenants.js';
import { WebServersService } from '../../../src/admin/web-servers.service.js';
import { conflictOn, errorBody, invalidAttribute, notFoundAt } from '../../helpers/errors.js';
import { jobDone } from '../../helpers/jobs.js';
import { ED25519, newKey, opensshPrivateKey, sshKeygenView } from '../../helpers/ssh-keys.js';
import { postSshKey, useSshKeysSuite } from '../../helpers/ssh-keys-suite.js';
import { SshKeysService } from '../../../src/resources/ssh-keys/ssh-keys.service.js';

describe.each(ENGINES)('ssh-keys on %s', { timeout: 60_000 }, (engine) => {
  const s = useSshKeysSuite(engine);
  const stored = async () => ({
    keys: await s.t.store.db.selectFrom('ssh_keys').select(['id', 'fingerprint']).orderBy('id').execute(),
    jobs: await s.t.store.db.selectFrom('queue_jobs').select('id').orderBy('id').execute(),
  });

  it('POST → 202 with the key and its job; when the job is done the key file holds it; GET shows it', async () => {
    const token = s.x.end1.token;
    const key = ED25519[0];
    const r = await postSshKey(s.t, token, { package_id: s.x.end1.packageId, public_key: `${key.line}\n`, description: 'laptop' });
    expect(r.status, r.body).toBe(202);
    const id = r.json.data.id;
    const jobUrl = r.json.data.links['queue-job'];
    expect(jobUrl).toMatch(new RegExp(`^${BASE}/queue-jobs/[0-9]+$`));
    expect(r.headers['content-location']).toBe(jobUrl);
    expect(r.json).toEqual({
      data: {
        type: 'ssh-key',
        id: expect.stringMatching(/^[0-9]+$/),
        attributes: {
          package_id: s.x.end1.packageId, public_key: key.line, fingerprint: sshKeygenView(key.line).fingerprint, algorithm: 'ssh-ed25519',
          description: 'laptop', created_at: expect.any(String), last_used_at: null,
        },
        relationships: { package: { data: { type: 'package', id: s.x.end1.packageId } } },
        links: { self: `${BASE}/ssh-keys/${id}`, 'queue-job': jobUrl },
      },
      links: { self: `${BASE}/ssh-keys` },
    });
    expect(Object.keys(r.json.data.attributes)).toEqual(['package_id', 'public_key', 'fingerprint', 'algorithm', 'description', 'created_at', 'last_used_at']);
    await jobDone(s.t, token, r);
    expect(await s.keyFile('u_end1')).toEqual([key.line]);
    const job = await call(s.t.app, 'GET', jobUrl.slice(BASE.length), { token });
    expect(job.json.data.attributes).toMatchObject({ job_type: 'ssh-key', action: 'create', status: 'done' });
    expect(job.json.data.links).toMatchObject({ object: `${BASE}/ssh-keys/${id}`, 'ssh-key': `${BASE}/ssh-keys/${id}` });
    const g = await call(s.t.app, 'GET', `/ssh-keys/${id}`, { token });
    expect(g.json).toEqual({ data: { ...r.json.data, links: { self: `${BASE}/ssh-keys/${id}` } }, links: { self: `${BASE}/ssh-keys/${id}` } });
    expect((await s.t.store.db.selectFrom('ssh_keys').select('state').where('id', '=', Number(id)).executeTakeFirstOrThrow()).state).toBe('live');
    // The package was placed on the web server by its first key: its connection facts name it.
    expect((await s.t.store.db.selectFrom('packages').select('web_server_name').where('id', '=', Number(s.x.end1.packageId)).executeTakeFirstOrThrow()).web_server_name).toBe('web1');
    const pkg = await call(s.t.app, 'GET', `/packages/${s.x.end1.packageId}`, { token });
    expect(pkg.json.data.attributes).toEqual({ name: 'end1 package', linux_user: 'u_end1', created_at: expect.any(String), sftp_host: '192.0.2.10', sftp_port: 22, sftp_user: 'u_end1' });
    expect(pkg.json.data.relationships['ssh-keys']).toEqual({ links: { related: `${BASE}/ssh-keys?filter[package_id]=${s.x.end1.packageId}` } });
  });

  it("the package's sftp_host and sftp_port follow its web server's registration (web-server set); the list shows them too", async () => {
    const { WebServersService } = await import('../../../src/admin/web-servers.service.js');
    const servers = new WebServersService(s.t.store.db);
    await servers.setSftp('web1', { sftpHost: 'web1.example.net', sftpPort: 2222 });
    try {
      const one = await call(s.t.app, 'GET', `/packages/${s.x.end1.packageId}`, { token: s.x.end1.token });
      expect(one.json.data.attributes).toMatchObject({ sftp_host: 'web1.example.net', sftp_port: 2222, sftp_user: 'u_end1' });
      const list = await call(s.t.app, 'GET', `/packages?filter[linux_user]=u_end1`, { token: s.x.reseller.token });
      expect(list.json.data[0].attributes).toMatchObject({ sftp_host: 'web1.example.net', sftp_port: 2222 });
    } finally {
      await servers.setSftp('web1', { sftpHost: null, sftpPort: 22 });
    }
  });

  it('every accepted algorithm; the file holds the keys oldest first; DELETE → 202 with the job, a repeat answers the same job; done → gone from file and API', async () => {
    const token = s.x.end2.token;
    const pkg = s.x.end2.packageId;
    const keys = [newKey('p256', 'ec'), newKey('rsa3072'), newKey('p384'), newKey('p521'), ED25519[1]];
    const ids: string[] = [];
    for (const k of keys) {
      const r = await postSshKey(s.t, token, { package_id: pkg, public_key: k.line });
      expect(r.status, r.body).toBe(202);
      expect(r.json.data.attributes).toMatchObject({ algorithm: k.alg, fingerprint: sshKeygenView(k.line).fingerprint, description: '' });
      ids.push(r.json.data.id);
      await jobDone(s.t, token, r);
    }
    expect(await s.keyFile('u_end2')).toEqual(keys.map((k) => k.line));
    const d = await call(s.t.app, 'DELETE', `/ssh-keys/${ids[1]}`, { token });
    expect(d.status, d.body).toBe(202);
    expect(d.json.data).toMatchObject({ type: 'queue-job', attributes: { job_type: 'ssh-key', action: 'delete' } });
    expect(d.headers['content-location']).toBe(`${BASE}/queue-jobs/${d.json.data.id}`);
    await jobDone(s.t, token, d);
    expect(await s.keyFile('u_end2')).toEqual(keys.filter((_, i) => i !== 1).map((k) => k.line));
    expect((await call(s.t.app, 'GET', `/ssh-keys/${ids[1]}`, { token })).json).toEqual(notFoundAt(`${BASE}/ssh-keys/${ids[1]}`, 'ssh-key'));
    expect((await call(s.t.app, 'DELETE', `/ssh-keys/${ids[1]}`, { token })).status).toBe(404);
    const list = await call(s.t.app, 'GET', `/ssh-keys?filter[package_id]=${pkg}`, { token });
    expect(list.json.data.map((k: { id: string }) => k.id)).toEqual(ids.filter((_, i) => i !== 1));
    // Deleting every key leaves an empty file: sshd then lets nobody in by key.
    for (const id of ids.filter((_, i) => i !== 1)) await jobDone(s.t, token, await call(s.t.app, 'DELETE', `/ssh-keys/${id}`, { token }));
    expect(await s.keyFile('u_end2')).toEqual([]);
  });

  it('every bad key → 422 on /data/attributes/public_key with the reason; nothing is stored, no job is made', async () => {
    const token = s.x.end1.token;
    const pkg = s.x.end1.packageId;
    const before = await stored();
    const { privateText } = opensshPrivateKey();
    const line = ED25519[2].line;
    const [alg, data] = line.split(' ');
    const cases: [string, string][] = [
      [privateText, 'This is a private key. Never send it anywhere; send the public key (the .pub file, e.g. ~/.ssh/id_ed25519.pub) instead. It was not stored.'],
      [newKey('rsa2048').line, 'This RSA key has 2048 bits; RSA keys need at least 3072 (ssh-keygen -t rsa -b 4096), or use ssh-ed25519.'],
      [`ssh-dss ${data}`, 'ssh-dss (DSA) keys are not accepted: OpenSSH no longer allows them. Accepted: ssh-ed25519, ecdsa-sha2-nistp256, ecdsa-sha2-nistp384, ecdsa-sha2-nistp521, and ssh-rsa of 3072 bits or more.'],
      [`command="/bin/sh" ${line}`, 'Options or a command before the key (e.g. command="…", no-pty, from="…") are not accepted: send only `<algorithm> <base64> [comment]`.'],
      [`no-pty ${line}`, 'Options or a command before the key (e.g. command="…", no-pty, from="…") are not accepted: send only `<algorithm> <base64> [comment]`.'],
      [`${line}\n${ED25519[3].line}`, 'public_key holds several lines: send one key per request.'],
      [`${line} ${ED25519[3].line}`, 'public_key holds several keys: send one key per request.'],
      [`${alg} ${data.slice(1)}`, 'The key data is not valid base64.'],
      [`ssh-rsa ${data}`, 'The key data is of type "ssh-ed25519", not ssh-rsa as the line says.'],
      ['', 'public_key is empty: send one line `<algorithm> <base64> [comment]`, e.g. the content of ~/.ssh/id_ed25519.pub.'],
    ];
    for (const [publicKey, detail] of cases) {
      const r = await postSshKey(s.t, token, { package_id: pkg, public_key: publicKey });
      expect(r.json, detail).toEqual(invalidAttribute('/ssh-keys', 'public_key', detail));
    }
    // The private key's text is nowhere in the answer.
    const p = await postSshKey(s.t, token, { package_id: pkg, public_key: privateText });
    for (const piece of privateText.split('\n').filter((l) => l.length > 8)) expect(p.body).not.toContain(piece);
    // The body's shape: a key that is no string, a missing one, an attribute we do not take.
    const notString = await postSshKey(s.t, token, { package_id: pkg, public_key: 42 });
    expect(notString.status).toBe(422);
    expect(notString.json.errors[0]).toMatchObject({ id: 'invalid_api_data', source: { pointer: '/data/attributes/public_key' } });
    const missing = await postSshKey(s.t, token, { package_id: pkg });
    expect(missing.status).toBe(422);
    expect(missing.json.errors[0]).toMatchObject({ id: 'invalid_api_data' });
    const extra = await postSshKey(s.t, token, { package_id: pkg, public_key: line, fingerprint: 'SHA256:x' });
    expect(extra.status).toBe(422);
    expect(await stored()).toEqual(before);
  });

  it("a key the package holds → 409 conflict on public_key (another comment is the same key); the plan's limit → 409 limit_reached; nothing stored", async () => {
    const { customerId, contactId } = await s.t.admin.customers.createCustomer({ organization: 'Keys AG', contact: { name: 'k', email: 'k@keys.example', phone: '+49 30 1234567' } });
    const { planId } = await s.t.admin.packages.createPlan({ name: 'two keys', sshKeysPerPackage: 2 });
    const { packageId } = await s.t.admin.packages.createPackage({ customerId, planId, name: 'keys', linuxUser: 'u_keys' });
    const { token } = await s.t.admin.customers.issueToken(contactId, 'test');
    const pkg = String(packageId);
    const first = await postSshKey(s.t, token, { package_id: pkg, public_key: ED25519[4].line });
    expect(first.status).toBe(202);
    const [alg, data] = ED25519[4].line.split(' ');
    const before = await stored();
    const dup = await postSshKey(s.t, token, { package_id: pkg, public_key: `${alg} ${data} other comment` });
    expect(dup.json).toEqual(conflictOn('/ssh-keys', 'public_key', 'This key is in this package already.'));
    expect(await stored()).toEqual(before);
    // The same key in another package is fine.
    expect((await postSshKey(s.t, s.x.solo.token, { package_id: s.x.solo.packageId, public_key: ED25519[4].line })).status).toBe(202);
    expect((await postSshKey(s.t, token, { package_id: pkg, public_key: ED25519[5].line })).status).toBe(202);
    const full = await stored();
    const over = await postSshKey(s.t, token, { package_id: pkg, public_key: ED25519[6].line });
    expect(over.json).toEqual(errorBody('limit_reached', 409, 'Plan limit reached', 'This package has reached its limit of 2 SSH keys (ssh_keys_per_package of its plan).', `${BASE}/ssh-keys`));
    expect(await stored()).toEqual(full);
    // A key being deleted no longer counts; while it is being deleted it cannot be added again.
    await jobDone(s.t, token, first);
    const d = await call(s.t.app, 'DELETE', `/ssh-keys/${first.json.data.id}`, { token });
    const meanwhile = await postSshKey(s.t, token, { package_id: pkg, public_key: ED25519[6].line });
    expect(meanwhile.status, meanwhile.body).toBe(202);
    await jobDone(s.t, token, d);
    await jobDone(s.t, token, meanwhile);
    expect(await s.keyFile('u_keys')).toEqual([ED25519[5].line, ED25519[6].line]);
  });

  it('tenancy: another customer\'s key and package are 404; a reseller sees its end customers\' keys and may add to their packages; filters', async () => {
    const mine = await postSshKey(s.t, s.x.end1.token, { package_id: s.x.end1.packageId, public_key: ED25519[7].line, description: 'end1' });
    expect(mine.status).toBe(202);
    const id = mine.json.data.id;
    for (const token of [s.x.end2.token, s.x.solo.token]) {
      expect((await call(s.t.app, 'GET', `/ssh-keys/${id}`, { token })).json).toEqual(notFoundAt(`${BASE}/ssh-keys/${id}`, 'ssh-key'));
      expect((await call(s.t.app, 'DELETE', `/ssh-keys/${id}`, { token })).json).toEqual(notFoundAt(`${BASE}/ssh-keys/${id}`, 'ssh-key'));
      const ids = (await call(s.t.app, 'GET', '/ssh-keys', { token })).json.data.map((k: { id: string }) => k.id);
      expect(ids).not.toContain(id);
    }
    for (const packageId of [s.x.end1.packageId, '99999', 'abc']) {
      const r = await postSshKey(s.t, s.x.solo.token, { package_id: packageId, public_key: ED25519[8].line });
      expect(r.json, packageId).toEqual(errorBody('resource_not_found', 404, 'Resource not found', 'No such package.', `${BASE}/ssh-keys`));
    }
    const reseller = s.x.reseller.token;
    expect((await call(s.t.app, 'GET', `/ssh-keys/${id}`, { token: reseller })).json.data.attributes.description).toBe('end1');
    const forEnd2 = await postSshKey(s.t, reseller, { package_id: s.x.end2.packageId, public_key: ED25519[8].line });
    expect(forEnd2.status).toBe(202);
    const all = await call(s.t.app, 'GET', '/ssh-keys', { token: reseller });
    const packages = new Set(all.json.data.map((k: { attributes: { package_id: string } }) => k.attributes.package_id));
    expect([...packages].sort()).toEqual([s.x.end1.packageId, s.x.end2.packageId].sort());
    const byPackage = await call(s.t.app, 'GET', `/ssh-keys?filter[package_id]=${s.x.end2.packageId}`, { token: reseller });
    expect(byPackage.json.data.map((k: { id: string }) => k.id)).toEqual([forEnd2.json.data.id]);
    const fp = mine.json.data.attributes.fingerprint;
    const byFingerprint = await call(s.t.app, 'GET', `/ssh-keys?filter[fingerprint]=${encodeURIComponent(fp)}`, { token: reseller });
    expect(byFingerprint.json.data.map((k: { id: string }) => k.id)).toEqual([id]);
    const paged = await call(s.t.app, 'GET', '/ssh-keys?page[number]=1&page[size]=1', { token: reseller });
    expect(paged.json.meta.total).toBe(all.json.data.length);
    expect(paged.json.data).toHaveLength(1);
    expect((await call(s.t.app, 'GET', '/ssh-keys?filter[nope]=1', { token: reseller })).status).toBe(400);
    await jobDone(s.t, s.x.end1.token, mine);
    await jobDone(s.t, reseller, forEnd2);
  });

  it('recordUse (the sshd log follower) sets last_used_at of that user\'s key with that fingerprint, never back in time', async () => {
    const token = s.x.solo.token;
    const k = ED25519[9];
    const r = await postSshKey(s.t, token, { package_id: s.x.solo.packageId, public_key: k.line });
    await jobDone(s.t, token, r);
    const fp = r.json.data.attributes.fingerprint;
    const service = new SshKeysService({ store: s.t.store });
    const lastUsed = async () => (await call(s.t.app, 'GET', `/ssh-keys/${r.json.data.id}`, { token })).json.data.attributes.last_used_at;
    expect(await service.recordUse('u_solo', fp, '2026-11-22T10:00:00Z')).toBe(true);
    expect(await lastUsed()).toBe('2026-11-22T10:00:00.000Z');
    expect(await service.recordUse('u_solo', fp, new Date('2026-11-22T09:00:00Z'))).toBe(true);
    expect(await lastUsed()).toBe('2026-11-22T10:00:00.000Z');
    expect(await service.recordUse('u_solo', fp, '2026-11-22T11:30:00.500Z')).toBe(true);
    expect(await lastUsed()).toBe('2026-11-22T11:30:00.500Z');
    // Another user, another fingerprint: nothing matches, nothing changes.
    expect(await service.recordUse('u_end1', fp, '2026-11-23T00:00:00Z')).toBe(false);
    expect(await service.recordUse('u_solo', sshKeygenView(ED25519[10].line).fingerprint, '2026-11-23T00:00:00Z')).toBe(false);
    expect(await lastUsed()).toBe('2026-11-22T11:30:00.500Z');
  });

  it('without a worker for the web server: no web server registered → 503 and nothing stored; then a repeated DELETE answers the standing job', async () => {
    const t = await createTestApp(engine);
    try {
      const x = await seedTenants(t.admin);
      const body = { package_id: x.end1.packageId, public_key: ED25519[11].line };
      const none = await postSshKey(t, x.end1.token, body);
      expect(none.json).toEqual(errorBody('service_unavailable', 503, 'Service unavailable', 'No web server is available for SSH keys yet. Please try again later or contact support.', `${BASE}/ssh-keys`));
      expect(await t.store.db.selectFrom('ssh_keys').select('id').execute()).toEqual([]);
      await new WebServersService(t.store.db).add({ name: 'web9', caddyAdmin: 'http://127.0.0.1:9', httpListen: '127.0.0.1:9', addresses: ['192.0.2.9'], homeRoot: '/srv/none' });
      const r = await postSshKey(t, x.end1.token, body);
      expect(r.status).toBe(202);
      const job = await t.store.db.selectFrom('queue_jobs').select(['queue', 'status']).where('id', '=', Number(r.json.data.links['queue-job'].split('/').pop())).executeTakeFirstOrThrow();
      expect(job).toEqual({ queue: 'web:web9', status: 'pending' });
      const d = await call(t.app, 'DELETE', `/ssh-keys/${r.json.data.id}`, { token: x.end1.token });
      expect(d.status).toBe(202);
      const again = await call(t.app, 'DELETE', `/ssh-keys/${r.json.data.id}`, { token: x.end1.token });
      expect(again.status).toBe(202);
      expect(again.json.data.id).toBe(d.json.data.id);
      expect(again.headers['content-location']).toBe(d.headers['content-location']);
      // Still listed (being deleted) until its job is done.
      expect((await call(t.app, 'GET', `/ssh-keys/${r.json.data.id}`, { token: x.end1.token })).status).toBe(200);
    } finally {
      await t.close();
    }
  });
});
