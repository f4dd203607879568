// The facts of a mail node that its daemons' files are made of (docs/decisions/0018-nodes-on-debian.md
// "One renderer, two profiles"): every value that differs between nodes or profiles. The renderers
// add only the fixed parts of each file; a profile (profiles.ts) chooses the facts.

import { mailReportKey } from '../../provisioning/mail/servers.repository.js';

export type DovecotVersion = '2.3' | '2.4';

/** A listener: `address` as the daemon writes it (`127.0.0.1`, `*, ::`), and a port. */
export interface Endpoint {
  address: string;
  port: number;
}

/** Where the mail directory is read from, as the mail servers connect to it. */
export type MailStore =
  | {
      driver: 'pgsql';
      host: string;
      port: number;
      dbname: string;
      user: string;
      password: string;
      schema: string;
      /** Over TLS, the server's certificate checked against these roots and the host name (a node); absent: as libpq defaults. */
      sslRootCert?: string;
    }
  | { driver: 'sqlite'; path: string };

export interface MailFacts {
  /** What the paths of mailFiles() are relative to: the stack's <dir>, or / (a prefix in tests). */
  root: string;
  /** The registered name (`admin mail-server add --name`): the directory's rows it reads. */
  name: string;
  /** HELO, Received:, the autoresponder's Message-IDs. */
  hostname: string;
  postmaster: string;
  store: MailStore;
  /** Certificate and key (PEM files) for IMAP and SMTP; null: no TLS (loopback only). */
  tls: { cert: string; key: string } | null;
  /** hostplane's API base, without a trailing slash: login reports and the rspamd settings map. */
  apiUrl: string;
  /** The doveadm HTTP API's key (as in doveadm.key, without whitespace); the report key derives from it. */
  doveadmKey: string;
  /** The system user owning the mailboxes, and where they live: <home>/<domain>/<local part>. */
  mail: { user: string; group: string; uid: number; gid: number; home: string };
  dovecot: {
    version: DovecotVersion;
    instance: string;
    baseDir: string;
    stateDir: string;
    /** null: syslog (the journal). */
    logPath: string | null;
    /** Where dovecot.conf and, for 2.3, its sql*.conf.ext are. */
    confDir: string;
    listen: string;
    imap: number;
    /** null: no imaps listener (port 0). */
    imaps: number | null;
    lmtp: Endpoint;
    doveadm: Endpoint;
    /** 2.3 reads the key and the report header from these files; 2.4 takes the values inline. */
    doveadmKeyFile: string;
    policyHeaderFile: string;
    /** Seconds before a failed login answers (Dovecot's default 2; the local stack 0). */
    authFailureDelay: number;
    /** Anvil's growing delay for repeated failures from one address (Dovecot's default). */
    loginPenalty: boolean;
  };
  postfix: {
    confDir: string;
    queueDir: string;
    dataDir: string;
    /** Postfix's own log file and a directory it may be in; null: syslog (the journal). */
    log: { file: string; prefix: string } | null;
    inetInterfaces: string;
    mynetworks: string;
    /** smtpd's listener; null: the `smtp` service (port 25 on inet_interfaces). */
    smtp: Endpoint | null;
    /** MX lookups for mail leaving (forwards, autoresponder replies); off where there is no network. */
    outboundDns: boolean;
    /** Postfix's certificate (STARTTLS on SMTP, the submission services); null: no TLS, no submission. */
    tls: { cert: string; key: string } | null;
    /**
     * Mail clients' submission as master.cf names the services: STARTTLS required before AUTH
     * (`587`) and implicit TLS (`465`); on the local stack loopback ports. null: none.
     */
    submission: { starttls: string; implicit: string } | null;
  };
  /** null: no spam check (Postfix without a milter). */
  rspamd: RspamdFacts | null;
  /**
   * The outbound limits' policy service (`hostplane node mail-policy`,
   * docs/decisions/0020-outbound-limits.md): where it listens, and its config file and that file's group.
   */
  policy: { listen: Endpoint; configFile: string; group: string };
}

export interface RspamdFacts {
  milter: Endpoint;
  controller: Endpoint;
  /** $LOCAL_CONFDIR: where local.d/, override.d/ and rspamd.conf.override are read from. */
  localConfDir: string;
  mapWatchInterval: string;
  hsCacheDir: string;
  /** A private instance's own top file and log (the local stack); null: Debian's rspamd service. */
  instance: { topFile: string; logFile: string } | null;
}

/** What names this server to hostplane in login reports and the settings map; opens nothing else. */
export const reportKey = (f: MailFacts): string => mailReportKey(f.doveadmKey);

/** The header of the login reports (2.3 reads it from policyHeaderFile, without a line break). */
export const policyHeader = (f: MailFacts): string => `X-Hostplane-Mail-Key: ${reportKey(f)}`;

/** The SQL readers (Dovecot's auth-worker and dict, Postfix's proxymap) run as root on SQLite. */
export const readersAsRoot = (f: MailFacts): boolean => f.store.driver === 'sqlite';

/** Dovecot's SASL listener that Postfix's submission services authenticate through. */
export const saslSocket = (f: MailFacts): string => `${f.dovecot.baseDir}/auth-postfix`;

/** Where Dovecot sends autoresponder replies: this node's Postfix. */
export const submissionHost = (f: MailFacts): string =>
  f.postfix.smtp ? `${f.postfix.smtp.address}:${f.postfix.smtp.port}` : '127.0.0.1:25';

/** "<schema>". before a table name on PostgreSQL, nothing on SQLite. */
export const tablePrefix = (f: MailFacts): string => (f.store.driver === 'pgsql' ? `"${f.store.schema}".` : '');

/** One of the maps hostplane serves this server (`rspamd-settings`, …), its name and report key as HTTP Basic credentials. */
export function mapUrl(f: MailFacts, map: string): string {
  const m = /^(https?:\/\/)(.+)$/.exec(f.apiUrl);
  if (!m) throw new Error(`apiUrl must be an http:// or https:// URL; got "${f.apiUrl}"`);
  return `${m[1]}${uriComponent(f.name)}:${reportKey(f)}@${m[2].replace(/\/$/, '')}/internal/${map}`;
}

/** The rspamd settings map of this server. */
export const settingsUrl = (f: MailFacts): string => mapUrl(f, 'rspamd-settings');

/** Percent-encoding of everything but A-Z a-z 0-9 - _ . ~ (jq's @uri, as up.sh encoded it). */
const uriComponent = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
