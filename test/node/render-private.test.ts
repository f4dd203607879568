// The private profile renders what the local stack ran before the typed renderer
// (docs/decisions/0018-nodes-on-debian.md "One renderer, two profiles"): deploy/mail's templates
// rendered with sed the way deploy/local/up.sh did (both kept in test/fixtures/mail-templates) and
// `hostplane node render --profile private` with the same values, into the same directory one after
// the other, read the same by doveconf -n, postconf -n and -M and rspamadm configdump, with the
// same files, modes and groups. Needs root, dovecot-core, postfix and rspamd; skipped without, failed
// under CI_REQUIRE_ALL=1.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requirable } from '../helpers/required.js';
import { daemonsView, mailToolsMissing, renderCli, run, tree } from '../helpers/mail-render.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** deploy/mail's templates as the local stack last rendered them, and up.sh's way of rendering them. */
const FIXTURE = path.join(ROOT, 'test/fixtures/mail-templates');
const KEY = 'c0ffee'.repeat(5) + 'ab';
const BASE = 47100;

function uidOf(user: string): { uid: number; gid: number } {
  const line = fs.readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith(`${user}:`));
  const [, , uid, gid] = (line ?? '::0:0').split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

const STORES = {
  pgsql: { driver: 'pgsql', host: '127.0.0.1', port: 5432, dbname: 'hostplane test', user: 'hostplane_mail_t', password: "p'w d", schema: 'tenant_1' },
  sqlite: { driver: 'sqlite', path: '/var/lib/hostplane/store/hostplane.db' },
} as const;

requirable(mailToolsMissing())('node render --profile private: what up.sh rendered from its templates with sed', () => {
  let tmp: string;
  beforeAll(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hp-render-'));
  });
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  describe.each([
    ['pgsql', true],
    ['sqlite', true],
    ['pgsql', false],
  ] as const)('store %s, rspamd %s', (store, rspamd) => {
    let dir: string;
    let input: Record<string, unknown>;
    let before: { view: Record<string, unknown>; files: Record<string, string> };

    beforeAll(async () => {
      dir = fs.mkdtempSync(path.join(tmp, `${store}-`));
      const mail = uidOf('mail');
      input = {
        dir,
        portBase: BASE,
        name: 'local-1',
        apiUrl: 'http://127.0.0.1:8080/api',
        doveadmKey: KEY,
        store: STORES[store],
        mailUid: mail.uid,
        mailGid: mail.gid,
        rspamd: rspamd ? { hsCacheDir: `${dir}/mail/rspamd/hs` } : null,
      };
      fs.mkdirSync(`${dir}/mail`);
      fs.writeFileSync(`${dir}/mail/doveadm.key`, KEY, { mode: 0o600 });
      const s = STORES[store];
      await run(path.join(FIXTURE, 'render.sh'), [], {
        TEMPLATES: FIXTURE, DIR: dir, BASE: String(BASE), NAME: 'local-1', URL: 'http://127.0.0.1:8080/api', KEY,
        MAIL_UID: String(mail.uid), MAIL_GID: String(mail.gid), HS_CACHE: rspamd ? `${dir}/mail/rspamd/hs` : '', STORE: store,
        ...(s.driver === 'pgsql'
          ? { PG_HOST: s.host, PG_PORT: String(s.port), PG_DB: s.dbname, PG_USER: s.user, PG_PASSWORD: s.password, PG_SCHEMA: s.schema }
          : { DB_FILE: s.path }),
      });
      before = { view: await daemonsView(dir), files: tree(dir) };
      fs.rmSync(`${dir}/mail`, { recursive: true });
      fs.mkdirSync(`${dir}/mail`);
      fs.writeFileSync(`${dir}/mail/doveadm.key`, KEY, { mode: 0o600 });
      await renderCli('private', input, dir, path.join(tmp, `${store}-${rspamd}.json`));
    }, 120_000);

    it('the same files, with the same modes and groups', () => {
      expect(tree(dir)).toEqual(before.files);
    });

    it('Dovecot, Postfix and rspamd read them the same', async () => {
      const after = await daemonsView(dir);
      expect(Object.keys(after).sort()).toEqual(Object.keys(before.view).sort());
      for (const [what, seen] of Object.entries(before.view)) expect(after[what], what).toEqual(seen);
    }, 60_000);

    it('a second run changes nothing', async () => {
      const again = await renderCli('private', input, dir, path.join(tmp, `${store}-${rspamd}.json`));
      expect(again.filter((w) => w.changed)).toEqual([]);
    });
  });
});
