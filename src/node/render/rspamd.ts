// rspamd 3.4+ as Postfix's milter (docs/decisions/0011-antispam-and-autoresponder.md): hostplane
// serves each recipient's antispam mode as a settings map; rspamd refuses, marks or passes spam.
// On Debian's service only LOCAL_CONFDIR's files are ours; the local stack runs a private instance
// with a top file of its own (rspamdConf), offline (no DNS lists, no map downloads).
import { mapUrl, settingsUrl, type MailFacts, type RspamdFacts } from './facts.js';

/** The private instance's top file: Debian's defaults ($CONFDIR) stay; no normal worker (self_scan). */
export function rspamdConf(r: RspamdFacts, logFile: string): string {
  const local = (name: string) => `  .include(try=true; priority=1,duplicate=merge) "$LOCAL_CONFDIR/local.d/${name}"
  .include(try=true; priority=10) "$LOCAL_CONFDIR/override.d/${name}"`;
  return `# hostplane's private rspamd (the local stack), rendered by \`hostplane node render\`; run as
#   rspamd -f -u _rspamd -g _rspamd -c <this file> --var LOCAL_CONFDIR=<dir> --var DBDIR=<dir>
# so the machine's own /etc/rspamd/local.d does not leak in. The log is private: it names the
# settings map's URL with its key.
.include "$CONFDIR/common.conf"

options {
  .include "$CONFDIR/options.inc"
${local('options.inc')}
}

logging {
  type = "file";
  filename = "${logFile}";
  .include "$CONFDIR/logging.inc"
${local('logging.inc')}
}

# The milter: \`reject\` refuses in the SMTP dialogue; any X-Spam header the sender wrote is removed.
worker "rspamd_proxy" {
  bind_socket = "${r.milter.address}:${r.milter.port}";
  milter = yes;
  timeout = 120s;
  self_scan = yes;
  upstream "local" {
    default = yes;
    self_scan = yes;
  }
  count = 1;
  max_retries = 5;
  discard_on_reject = false;
  quarantine_on_reject = false;
  spam_header = "X-Spam";
  reject_message = "Spam message rejected";
${local('worker-proxy.inc')}
}

# Without a password the controller answers only secure_ip, but every local user there.
worker "controller" {
  bind_socket = "${r.controller.address}:${r.controller.port}";
  count = 1;
  secure_ip = "127.0.0.1";
  secure_ip = "::1";
  static_dir = "\${WWWDIR}";
${local('worker-controller.inc')}
}
`;
}

/**
 * $LOCAL_CONFDIR/rspamd.conf.override (priority 10: each section replaces Debian's): the settings
 * map and the actions. Without a matching setting a recipient is in `reject`: 15 or more is refused.
 */
export function rspamdHostplaneConf(f: MailFacts): string {
  return `# hostplane's antispam modes, rendered by \`hostplane node render\`. The map lists the addresses
# not in reject; rspamd applies one setting per message: junk-folder, then subject-rewrite, then
# none, then reject decide for all. No greylisting, no header below the reject score.
settings = "${settingsUrl(f)}";

actions {
  reject = 15;
  add_header = null;
  greylist = null;
  rewrite_subject = null;
  subject = "***SPAM*** %s";
}

# DKIM signatures (API guide "Sending mail"): mail of a login, and mail from this server itself
# (autoresponder replies, over loopback), From: a domain in the signing table, with its key.
dkim_signing {
  enabled = true;
  signing_table = "${mapUrl(f, 'rspamd-dkim-signing')}";
  key_table = "${mapUrl(f, 'rspamd-dkim-keys')}";
  sign_authenticated = true;
  sign_local = true;
  sign_inbound = false;
  allow_envfrom_empty = true;
  use_esld = false;
  try_fallback = false;
}

# "X-Spam: Yes" on all accepted spam (also "rewrite subject", local and authenticated senders): the
# mailboxes' Sieve scripts file it by their own mode. Authentication-Results: what the SPF, DKIM and
# DMARC checks of incoming mail found (RFC 8601), for the reader's mail program.
milter_headers {
  use = ["spam-header", "authentication-results"];
  skip_local = false;
  skip_authenticated = false;
  routines {
    spam-header {
      header = "X-Spam";
      value = "Yes";
      remove = 1;
    }
  }
}
`;
}

/** $LOCAL_CONFDIR/override.d/options.inc: how often the settings map is asked, the compiled cache. */
export function rspamdOptions(r: RspamdFacts): string {
  return `# How often rspamd asks for its maps (at least ~2 s plus a random part, whatever is set): the jobs
# and PATCHes of antispam changes wait for it. A cold start compiles the expressions for 10 to 30 s
# into hs_cache_dir. The maps' cached copies go to DBDIR, not the package's /var/lib/rspamd.
map_watch_interval = ${r.mapWatchInterval};
# Only this server itself is local (it signs its own mail): not the private networks rspamd's default names.
local_addrs = ["127.0.0.0/8", "::1"];
maps_cache_dir = "$DBDIR";
hs_cache_dir = "${r.hsCacheDir}";
`;
}

/** The local stack and tests only: every module that asks the network or needs Redis is off. */
export function rspamdOfflineConf(): string {
  const off = ['rbl', 'surbl', 'emails', 'spf', 'dkim', 'dmarc', 'arc', 'asn', 'fuzzy_check', 'phishing', 'whitelist', 'hfilter', 'mx_check', 'dcc', 'rspamd_update', 'reputation', 'neural', 'greylist', 'ratelimit', 'replies', 'history_redis', 'url_redirector', 'bimi', 'p0f'];
  return `# rspamd without a network, NOT for a mail server: a scan takes milliseconds and gives the same
# result on any machine.
${off.map((m) => `${m} { enabled = false; }`).join('\n')}
# Their maps are on maps.rspamd.com: the packaged copies instead.
multimap { enabled = false; }
mid {
  source {
    url = ["file://\${CONFDIR}/maps.d/mid.inc"];
  }
}
mime_types {
  file = ["file://\${CONFDIR}/maps.d/mime_types.inc"];
  extension_map = {
    html = "text/html";
    txt = ["message/disposition-notification", "text/plain", "text/rfc822-headers"];
    pdf = ["application/octet-stream", "application/pdf", "application/x-pdf"];
  }
}
`;
}

/** Offline's DNS: a closed loopback port, so a lookup fails at once instead of waiting 5 × 1 s. */
export function rspamdOfflineOptions(): string {
  return `# rspamd without a network, NOT for a mail server: DNS goes to a closed port.
dns {
  nameserver = ["127.0.0.1:9"];
}
`;
}

/** A deterministic spam signal for tests: "X-Hostplane-Test-Spam: yes" scores 20 (reject is 15). */
export function rspamdTestSpam(): string {
  return `# Tests and the local stack only, NOT for a mail server. (GTUBE works everywhere too: rspamd
# refuses it before any setting applies.)
HP_TEST_SPAM {
  re = "X-Hostplane-Test-Spam=/^yes$/iH";
  score = 20.0;
  description = "hostplane's test header for spam (tests and the local stack only)";
}
`;
}

/**
 * $LOCAL_CONFDIR/rspamd.local.lua: a login sends only as its own address (API guide "Sending mail").
 * Postfix checks the envelope sender (smtpd_sender_login_maps); the From: header only rspamd sees.
 * A +tag of the address is the address.
 */
export function rspamdLocalLua(): string {
  return `-- hostplane's rules, rendered by \`hostplane node render\`.
local function own(addr)
  return (addr or ''):lower():gsub('%+[^@]*@', '@')
end

rspamd_config:register_symbol({
  name = 'HP_FROM_NOT_LOGIN',
  type = 'prefilter',
  priority = 10,
  callback = function(task)
    local user = task:get_user()
    if not user then return end
    local from = task:get_from('mime')
    if from and #from == 1 and from[1].addr and own(from[1].addr) == own(user) then return end
    task:set_pre_result('reject', 'From: must be the address you logged in as (' .. user:lower() .. ')', 'hostplane')
  end,
})
`;
}
