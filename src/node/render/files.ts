// Every file of a mail node, with the mode and group it is written with: what `hostplane node
// render` writes and `node setup` checks with each daemon before moving it into place.
import path from 'node:path';
import { policyHeader, type MailFacts } from './facts.js';
import { dovecotConf23, dovecotDictSieveConf, dovecotSqlAppConf, dovecotSqlConf } from './dovecot23.js';
import { dovecotConf24 } from './dovecot24.js';
import { POSTFIX_MAPS, postfixMainCf, postfixMap, postfixMasterCf } from './postfix.js';
import { mailPolicyConf } from './mail-policy.js';
import { rspamdConf, rspamdHostplaneConf, rspamdLocalLua, rspamdOfflineConf, rspamdOfflineOptions, rspamdOptions, rspamdTestSpam } from './rspamd.js';
import type { Profile } from './profiles.js';

export interface RenderedFile {
  /** Relative to facts.root. */
  path: string;
  text: string;
  mode: number;
  /** The group that owns it: the daemon that reads it after dropping root. */
  group: string;
}

export function mailFiles(f: MailFacts, profile: Profile): RenderedFile[] {
  const files: RenderedFile[] = [];
  // Most of them hold the store's password or a key: readable by their daemon's group only.
  const add = (file: string, text: string, group: string, mode = 0o640) => files.push({ path: path.relative(f.root, file), text, mode, group });
  const d = f.dovecot.confDir;
  if (f.dovecot.version === '2.3') {
    add(`${d}/dovecot.conf`, dovecotConf23(f), 'dovecot');
    add(`${d}/sql.conf.ext`, dovecotSqlConf(f), 'dovecot');
    add(`${d}/sql-app.conf.ext`, dovecotSqlAppConf(f), 'dovecot');
    add(`${d}/dict-sieve.conf.ext`, dovecotDictSieveConf(f), 'dovecot');
    // Dovecot 2.3 refuses a header with a line break at the end.
    add(f.dovecot.policyHeaderFile, policyHeader(f), 'root', 0o600);
  } else {
    add(`${d}/dovecot.conf`, dovecotConf24(f), 'dovecot');
  }
  const p = f.postfix.confDir;
  // On a node Postfix's commands (sendmail, postqueue) read main.cf and master.cf as any user.
  const cfMode = profile === 'system' ? 0o644 : 0o640;
  add(`${p}/main.cf`, postfixMainCf(f), profile === 'system' ? 'root' : 'postfix', cfMode);
  add(`${p}/master.cf`, postfixMasterCf(f), profile === 'system' ? 'root' : 'postfix', cfMode);
  for (const m of POSTFIX_MAPS) add(`${p}/${f.store.driver}-${m}.cf`, postfixMap(f, m), 'postfix');
  // The store's password as in Postfix's maps: for the same group.
  add(f.policy.configFile, mailPolicyConf(f), f.policy.group);
  const r = f.rspamd;
  if (r) {
    const l = r.localConfDir;
    if (r.instance) add(r.instance.topFile, rspamdConf(r, r.instance.logFile), '_rspamd');
    add(`${l}/rspamd.conf.override`, rspamdHostplaneConf(f), '_rspamd');
    add(`${l}/override.d/options.inc`, rspamdOptions(r), '_rspamd');
    add(`${l}/rspamd.local.lua`, rspamdLocalLua(), '_rspamd');
    if (profile === 'private') {
      add(`${l}/rspamd.conf.local.override`, rspamdOfflineConf(), '_rspamd');
      add(`${l}/local.d/options.inc`, rspamdOfflineOptions(), '_rspamd');
      add(`${l}/local.d/regexp.conf`, rspamdTestSpam(), '_rspamd');
    }
  }
  return files;
}
