#!/usr/bin/env bash
# The local stack (docs/decisions/0008-web-servers.md): private instances of the
# installed real components under one directory, on loopback ports, without touching /etc or the
# machine's own services — the way to try every resource on one machine, and what the tests use.
#
#   DATABASE_URL=<store> deploy/local/up.sh <dir> <port-base>
#
# It runs Caddy (admin API on <port-base>, HTTP on <port-base>+1, HTTPS on <port-base>+2) and, for
# e-mail, Dovecot and Postfix with the files `hostplane node render --profile
# private` writes (src/node/render; SMTP on <port-base>+10, IMAP +11, LMTP +12, doveadm HTTP API
# +13; all on 127.0.0.1) and rspamd, Postfix's milter (milter +14, controller +15). The web server
# is registered with SFTP on 127.0.0.1:<port-base>+20 (the packages' sftp_host and sftp_port).
# PHP-FPM masters are not started here: hostplane's web worker starts one per version on demand
# under <dir>/web; this script only finds the installed
# /usr/sbin/php-fpm<major.minor> binaries. It registers the stack as web server
# ${STACK_WEB_NAME:-local} in the store DATABASE_URL names (which must be migrated: `hostplane
# migrate`) through the admin CLI — `$HOSTPLANE` or, unset, `node --import tsx src/main.ts` of this
# repository — unless a server of that name is registered already, writes <dir>/stack.json and
# prints how to use it. deploy/local/down.sh <dir> stops it all.
#
# Layout: <dir>/caddy (initial.json, caddy.pid, caddy.log, Caddy's HOME and XDG data/config, so its
# storage and autosave stay here), <dir>/www (the packages' homes), <dir>/web (hostplane's PHP-FPM
# configs, pools, sockets, pid files), <dir>/mail (see below), <dir>/registration.json (the store and
# the server names registered in it, mode 0600: down.sh prints from it how to unregister them).
# Refuses (exit 1) when one of the ports is taken or <dir> already has a running stack; exit 2 on a
# wrong call.
#
# Mail: Dovecot and Postfix read hostplane's mail directory (the tables mail_domains, mail_users,
# mail_app_passwords, mail_aliases, mail_sieve) straight from the store on every login and delivery. On
# PostgreSQL they connect as a read-only role hostplane_mail_<database>_<schema> that up.sh creates
# (or, when it exists, gives a new random password) with SELECT on exactly those five tables — the
# ones that exist now: up.sh creates nothing else in the store, so after the migration that adds
# them run up.sh again — or, when the DATABASE_URL user may not create roles, as that user. On
# SQLite they open the store's file (its absolute path). <dir>/mail holds the rendered configs
# (dovecot/, postfix/), Dovecot's base_dir run/ (master.pid), state/ and dovecot.log, Postfix's
# queue spool/ (pid/master.pid), data/ and postfix.log, the mailboxes vmail/<domain>/<local part>
# (owned by the system user mail) and doveadm.key (the doveadm HTTP API key, mode 0600). Dovecot
# reports logins to the hostplane API at $HOSTPLANE_URL (default http://127.0.0.1:$PORT, or port 8080
# without PORT: where `npm start` listens with the same PORT): that is how application passwords
# get their last_used_at.
# Mail clients submit on port-base+17 (STARTTLS required before AUTH) and +18 (implicit TLS) with a
# mailbox's password or an application password, as their own address only; the certificate is the
# stack's own, self-signed for mail.hostplane.test and 127.0.0.1 (<dir>/mail/tls/cert.pem: trust it
# as the CA), made once and kept (needs openssl). Each mailbox may send to as many recipients per
# hour as its plan says (docs/decisions/0020-outbound-limits.md): Postfix asks hostplane's mail
# policy service (`hostplane node mail-policy`, run with this script's CLI) on 127.0.0.1:port-base+19;
# <dir>/mail/policy holds its config (mail-policy.json: the read-only store access, mode 0640),
# policy.pid and policy.log.
# This is a test and development tool: logins fail without Dovecot's 2-second delay
# (auth_failure_delay = 0) and without its growing penalty for repeated failures (anvil), everything
# listens on loopback, IMAP without TLS, and on SQLite the SQL readers (Dovecot's auth-worker, Postfix's
# proxymap) run as root so the store's directory may stay private. The mail part needs root,
# dovecot, postfix, setpriv (psql on PostgreSQL) and a <dir> the users mail, dovecot and postfix can
# enter (every directory above it o+x); without, up.sh starts the rest, says why mail is missing and
# leaves "mail" out of stack.json.
#
# rspamd (src/node/render/rspamd.ts) runs under <dir>/mail/rspamd (rspamd.conf, local/ — its
# LOCAL_CONFDIR —, db/, rspamd.log, rspamd.pid) as _rspamd, offline (no DNS lists, no map
# downloads) and with the test header X-Hostplane-Test-Spam: yes scoring as spam. It reads the
# per-recipient antispam modes from $HOSTPLANE_URL/internal/rspamd-settings, asking again every few
# seconds: when hostplane does not answer its first request, it asks again only 20 to 40 s later.
# Its compiled expressions are shared by every stack in /var/tmp/hostplane-rspamd-hs (a cold start
# takes 10 to 30 s, a warm one about a second). Without rspamd (or its user _rspamd, or with
# STACK_RSPAMD=off), mail runs without the milter and up.sh says why; so does Postfix while rspamd
# is down (milter_default_action = accept; submitted mail is deferred instead, as it must be checked
# and signed).
#
# SFTP (docs/decisions/0023-sftp.md): a private sshd (/usr/sbin/sshd, Debian: openssh-server) on
# 127.0.0.1:<port-base>+20, SFTP only, chrooted into each package's home, with the keys hostplane
# writes (<dir>/web/ssh/authorized_keys/<user>); its own host key (made once), sshd_config
# (written by `hostplane node render-sshd`), sshd.pid, sshd.log and known_hosts are in <dir>/sftp.
# The packages' Linux users exist only for the stack: <dir>/web/users/passwd and group are copies of
# the machine's files (the system part refreshed on every up.sh) to which hostplane's web worker
# appends each package's user; sshd runs in a private mount namespace (unshare --mount) where those
# copies are bind-mounted over /etc/passwd and /etc/group, a tmpfs is /run (sshd's /run/sshd) and the
# homes are bind-mounted at /run/hostplane-sftp/www, a path whose every directory is root's (sshd's
# chroot rule; <dir> may be below /tmp). Nothing of the machine's /etc changes. PHP-FPM runs each
# package's pool as its user too (by ids). Needs root, unshare, setpriv and ssh-keygen, port-base+20,
# and a <dir> every user can enter (each directory above it o+x: the packages' PHP and sshd, as the
# user, read below it); without, up.sh starts the rest, says why SFTP is missing and leaves
# "sftp" out of stack.json (the packages then have no users of their own, as before).
#
# A DNS secondary (docs/decisions/0013-dns-secondaries.md), on request only:
#
#   STACK_DNS_SECONDARY=knot DATABASE_URL=<store> deploy/local/up.sh <dir> <port-base>
#
# also starts a private Knot (/usr/sbin/knotd, Debian: knot) on 127.0.0.1:<port-base>+16 (UDP and
# TCP) as a secondary of hostplane's DNS server at $HOSTPLANE_DNS (default 127.0.0.1:5300, where
# `npm start` / `hostplane serve` listens with the default DNS_LISTEN; a loopback address, as Knot
# transfers from 127.0.0.1, the address it is registered with). Knot reads hostplane's catalog zone
# $DNS_CATALOG_ZONE (default catalog.hostplane.invalid) and so follows every presence domain by
# itself. It runs as the user running up.sh; <dir>/dns holds knot.conf (written by `hostplane node
# render-knot`, the renderer node setup uses: src/node/render/knot.ts) and tsig.key (the TSIG key,
# BIND format, both mode 0600), knot.pid, knot.log, Knot's storage (journal/, timers/, catalog/: the
# zones are kept in the journal only, no zone files), its control socket knot.sock and
# registration.json (mode 0600: the registration and the store, for down.sh).
# up.sh registers it as DNS secondary ${STACK_WEB_NAME:-local}-knot (before Knot starts, so its
# first transfer is accepted) unless it is registered for this stack already; from then on every
# DNS job waits until Knot serves its change. Without knotd or knotc (or port-base+16, or a catalog
# zone), up.sh starts the rest and says why; down.sh stops Knot and removes the registration.
set -euo pipefail

prog=up.sh
die() {
  printf '%s: %s\n' "$prog" "$*" >&2
  exit 1
}
usage() {
  printf 'usage: DATABASE_URL=<store> %s <dir> <port-base>\n' "$0" >&2
  exit 2
}

[[ $# -eq 2 ]] || usage
dir_arg=$1
base=$2
if ! [[ $base =~ ^[1-9][0-9]{0,4}$ ]] || ((base + 2 > 65535)); then
  die "port-base must be a port number from 1 to 65533 (the stack uses it and the next two); got '$base'."
fi
[[ -n ${DATABASE_URL:-} ]] || die "DATABASE_URL is not set: name the store to register the stack in, e.g. DATABASE_URL=/tmp/hostplane.db (migrated with \`hostplane migrate\`)."
# Where Dovecot (login reports) and rspamd (antispam modes) reach the API: `npm start` with the same
# PORT listens there. A wrong one would only show as logins and spam modes that silently stop.
if [[ -n ${PORT:-} ]] && ! { [[ $PORT =~ ^[1-9][0-9]{0,4}$ ]] && ((PORT <= 65535)); }; then
  die "PORT must be the API's port, 1 to 65535 (as for npm start); got '$PORT'."
fi
hostplane_url=${HOSTPLANE_URL:-http://127.0.0.1:${PORT:-8080}}
hostplane_url=${hostplane_url%/}
[[ $hostplane_url =~ ^https?://.+$ ]] || die "HOSTPLANE_URL must be an http:// or https:// URL; got '$hostplane_url'."
# What down.sh prints to unregister the stack: the store, absolute as the CLI reads it here.
store_url=$DATABASE_URL
if ! [[ $store_url =~ ^[A-Za-z][A-Za-z0-9+.-]*: || $store_url == /* ]]; then store_url=$PWD/$store_url; fi
for tool in caddy curl jq setsid nohup; do
  command -v "$tool" >/dev/null || die "$tool is not installed (needed to run the stack)."
done

# Why the mail part cannot run here, or nothing (more reasons are found once <dir> and the store are known).
mail_missing=
if ((base + 19 > 65535)); then
  mail_missing="it needs port-base+19 to be a port (port-base at most 65516)"
elif ((EUID != 0)); then
  mail_missing="Postfix and Dovecot need root (run up.sh as root)"
else
  for tool in dovecot postfix setpriv openssl; do
    if ! command -v "$tool" >/dev/null; then
      mail_missing="$tool is not installed (Debian: dovecot-imapd dovecot-lmtpd dovecot-pgsql dovecot-sqlite postfix postfix-pgsql postfix-sqlite openssl)"
      break
    fi
  done
  for user in mail dovecot postfix; do
    [[ -n $mail_missing ]] || getent passwd "$user" >/dev/null || mail_missing="there is no system user $user (the Dovecot and Postfix packages make it)"
  done
fi

# --- SFTP: why the private sshd cannot run here, or nothing (more once <dir> is known) ------------------
sftp_missing=
sftp_port=$((base + 20))
if ((base + 20 > 65535)); then
  sftp_missing="it needs port-base+20 to be a port (port-base at most 65515)"
elif ((EUID != 0)); then
  sftp_missing="sshd needs root (run up.sh as root)"
elif [[ ! -x /usr/sbin/sshd ]]; then
  sftp_missing="/usr/sbin/sshd is not installed (Debian: openssh-server)"
else
  for tool in unshare setpriv ssh-keygen mount; do
    if ! command -v "$tool" >/dev/null; then
      sftp_missing="$tool is not installed (Debian: util-linux, mount, openssh-client)"
      break
    fi
  done
fi

# --- rspamd: why Postfix runs without its milter, or nothing -------------------------------------------
rspamd_milter_port=$((base + 14))
rspamd_controller_port=$((base + 15))
rspamd_pid_rel=mail/rspamd/rspamd.pid
rspamd_missing=
case ${STACK_RSPAMD:-on} in
  on | off) ;;
  *) die "STACK_RSPAMD must be on or off; got '${STACK_RSPAMD}'." ;;
esac
if [[ ${STACK_RSPAMD:-on} == off ]]; then
  rspamd_missing="STACK_RSPAMD=off"
elif ! command -v rspamd >/dev/null; then
  rspamd_missing="rspamd is not installed (Debian: rspamd)"
elif ! getent passwd _rspamd >/dev/null; then
  rspamd_missing="there is no system user _rspamd (the rspamd package makes it)"
fi
# Whether <pid> is a live rspamd: its master renames itself "rspamd: main process".
rspamd_live() {
  live_as "$1" rspamd: || live_as "$1" rspamd
}
# --- end of rspamd ---------------------------------------------------------------------------------------

name=${STACK_WEB_NAME:-local}
admin_port=$base
http_port=$((base + 1))
https_port=$((base + 2))
smtp_port=$((base + 10))
imap_port=$((base + 11))
lmtp_port=$((base + 12))
doveadm_port=$((base + 13))
submission_port=$((base + 17))
submissions_port=$((base + 18))
policy_port=$((base + 19))
here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
repo=$(cd -- "$here/../.." && pwd -P)

# --- the DNS secondary: Knot reading hostplane's catalog zone, on request --------------------------------
knot_port=$((base + 16))
knot_pid_rel=dns/knot.pid
knot_missing=
case ${STACK_DNS_SECONDARY:-} in
  '') dns_secondary= ;;
  knot) dns_secondary=knot ;;
  *) die "STACK_DNS_SECONDARY must be knot (or unset for no DNS secondary); got '${STACK_DNS_SECONDARY}'." ;;
esac
if [[ -n $dns_secondary ]]; then
  hostplane_dns=${HOSTPLANE_DNS:-127.0.0.1:5300}
  if ! [[ $hostplane_dns =~ ^(127\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}|0\.0\.0\.0):([1-9][0-9]{0,4})$ ]] || ((BASH_REMATCH[2] > 65535)); then
    die "HOSTPLANE_DNS must be host:port of hostplane's DNS server (its DNS_LISTEN) on a loopback address, e.g. 127.0.0.1:5300; got '$hostplane_dns'."
  fi
  # Knot asks 0.0.0.0 (every address) at 127.0.0.1; it always transfers from 127.0.0.1 (via), the
  # address hostplane knows it by.
  primary_host=${BASH_REMATCH[1]}
  primary_port=${BASH_REMATCH[2]}
  [[ $primary_host != 0.0.0.0 ]] || primary_host=127.0.0.1
  catalog=${DNS_CATALOG_ZONE:-catalog.hostplane.invalid}
  catalog=${catalog,,}
  catalog=${catalog%.}
  secondary_name=$name-knot
  if [[ $catalog == off ]]; then
    knot_missing="DNS_CATALOG_ZONE is off, and Knot learns hostplane's zones from its catalog zone"
  elif ! [[ $catalog =~ ^([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?\.)+[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$ ]]; then
    die "DNS_CATALOG_ZONE must name hostplane's catalog zone as it does (default catalog.hostplane.invalid); got '${DNS_CATALOG_ZONE}'."
  elif ((base + 16 > 65535)); then
    knot_missing="it needs port-base+16 to be a port (port-base at most 65519)"
  elif ! knotd=$(PATH=$PATH:/usr/sbin command -v knotd); then
    knot_missing="knotd is not installed (Debian: knot)"
  elif ! knotc=$(PATH=$PATH:/usr/sbin command -v knotc); then
    knot_missing="knotc is not installed (Debian: knot)"
  elif ((${#secondary_name} > 32)); then
    die "the DNS secondary would be named \"$secondary_name\", longer than 32 characters: pick a shorter STACK_WEB_NAME."
  fi
fi
# --- end of the DNS secondary ------------------------------------------------------------------------

# Whether <pid> is a live process (a zombie is not: it only waits for its parent).
alive() {
  local stat state
  [[ $1 =~ ^[1-9][0-9]*$ ]] || return 1
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  state=${stat##*) }
  state=${state%% *}
  [[ $state != Z && $state != X ]]
}

# Whether <pid> is alive and runs the program <name> (argv[0]'s name).
live_as() {
  local pid=$1 name=$2 argv0=''
  alive "$pid" || return 1
  IFS= read -r -d '' argv0 2>/dev/null <"/proc/$pid/cmdline" || true
  argv0=${argv0%% *}
  [[ ${argv0##*/} == "$name" ]]
}

# Whether <pid> is a live sshd: its title becomes "sshd: /usr/sbin/sshd -D … [listener] …" once it listens.
sshd_live() {
  live_as "$1" sshd || live_as "$1" sshd:
}

# Whether something accepts connections on 127.0.0.1:<port>.
port_taken() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# Whether <pid> is a live `hostplane node mail-policy`: node, with those two arguments in a row.
mail_policy_live() {
  live_as "$1" node && [[ $(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null) == *" node mail-policy "* ]]
}

# await_ready <name> <pid variable> <pid file> <log> <seconds> <what is late> <command…>: waits
# until the command succeeds for a daemon just started in the background. If the daemon exits
# first, its pid variable is cleared (nothing left to stop), its pid file removed, and up.sh dies
# with the end of its log; after <seconds>, it dies saying what is late.
await_ready() {
  local name=$1 pidvar=$2 pidfile=$3 log=$4 seconds=$5 late=$6
  shift 6
  local deadline=$((SECONDS + seconds))
  until "$@"; do
    if ! alive "${!pidvar}"; then
      printf -v "$pidvar" '%s' ''
      rm -f -- "$pidfile"
      die "$name exited at start; the end of $log:
$(tail -n 20 -- "$log" 2>/dev/null)"
    fi
    ((SECONDS < deadline)) || die "$late within $seconds s (log: $log)."
    sleep 0.1
  done
}

# --- refuse what would clash ----------------------------------------------------------------------
pidfile_rel=caddy/caddy.pid
if [[ -f $dir_arg/$pidfile_rel ]]; then
  old=$(head -n 1 -- "$dir_arg/$pidfile_rel" 2>/dev/null || true)
  if live_as "$old" caddy; then
    die "$dir_arg already has a running stack (caddy pid $old); stop it first with $here/down.sh $dir_arg"
  fi
fi
# Dovecot's and Postfix's master pid files.
dovecot_pid_rel=mail/run/master.pid
policy_pid_rel=mail/policy/policy.pid
postfix_pid_rel=mail/spool/pid/master.pid
for rel in "$dovecot_pid_rel:dovecot" "$postfix_pid_rel:master"; do
  if [[ -f $dir_arg/${rel%:*} ]]; then
    old=$(head -n 1 -- "$dir_arg/${rel%:*}" 2>/dev/null || true)
    old=${old//[[:space:]]/}
    if live_as "$old" "${rel#*:}"; then
      die "$dir_arg already has a running stack (${rel#*:} pid $old); stop it first with $here/down.sh $dir_arg"
    fi
  fi
done
sftp_pid_rel=sftp/sshd.pid
if [[ -f $dir_arg/$sftp_pid_rel ]]; then
  old=$(head -n 1 -- "$dir_arg/$sftp_pid_rel" 2>/dev/null || true)
  old=${old//[[:space:]]/}
  if sshd_live "$old"; then
    die "$dir_arg already has a running stack (sshd pid $old); stop it first with $here/down.sh $dir_arg"
  fi
fi
if [[ -z $sftp_missing ]] && port_taken "$sftp_port"; then
  sftp_missing="port $sftp_port on 127.0.0.1 (port-base+20) is in use"
fi
for p in "$admin_port" "$http_port" "$https_port"; do
  if port_taken "$p"; then
    die "port $p on 127.0.0.1 is in use; the stack needs $admin_port, $http_port and $https_port: pick another port-base."
  fi
done
if [[ -z $mail_missing ]]; then
  for p in "$smtp_port" "$imap_port" "$lmtp_port" "$doveadm_port" "$submission_port" "$submissions_port" "$policy_port"; do
    if port_taken "$p"; then
      die "port $p on 127.0.0.1 is in use; the stack's mail servers need $smtp_port to $doveadm_port and $submission_port to $policy_port: pick another port-base."
    fi
  done
  if [[ -f $dir_arg/$policy_pid_rel ]]; then
    old=$(head -n 1 -- "$dir_arg/$policy_pid_rel" 2>/dev/null || true)
    old=${old//[[:space:]]/}
    if mail_policy_live "$old"; then
      die "$dir_arg already has a running stack (mail policy service pid $old); stop it first with $here/down.sh $dir_arg"
    fi
  fi
fi
# rspamd's pid file and ports.
if [[ -z $mail_missing && -z $rspamd_missing ]]; then
  if [[ -f $dir_arg/$rspamd_pid_rel ]]; then
    old=$(head -n 1 -- "$dir_arg/$rspamd_pid_rel" 2>/dev/null || true)
    old=${old//[[:space:]]/}
    if rspamd_live "$old"; then
      die "$dir_arg already has a running stack (rspamd pid $old); stop it first with $here/down.sh $dir_arg"
    fi
  fi
  for p in "$rspamd_milter_port" "$rspamd_controller_port"; do
    if port_taken "$p"; then
      die "port $p on 127.0.0.1 is in use; the stack's rspamd needs $rspamd_milter_port and $rspamd_controller_port: pick another port-base."
    fi
  done
fi

# The DNS secondary's pid file and port (TCP; a UDP clash shows when Knot does not start).
if [[ -n $dns_secondary && -z $knot_missing ]]; then
  if [[ -f $dir_arg/$knot_pid_rel ]]; then
    old=$(head -n 1 -- "$dir_arg/$knot_pid_rel" 2>/dev/null || true)
    old=${old//[[:space:]]/}
    if live_as "$old" knotd; then
      die "$dir_arg already has a running stack (knotd pid $old); stop it first with $here/down.sh $dir_arg"
    fi
  fi
  if port_taken "$knot_port"; then
    die "port $knot_port on 127.0.0.1 is in use; the stack's DNS secondary (Knot) needs it: pick another port-base."
  fi
fi

# --- the directory ----------------------------------------------------------------------------------
mkdir -p -- "$dir_arg"
dir=$(cd -- "$dir_arg" && pwd -P)
mkdir -p -- "$dir/caddy/home" "$dir/caddy/data" "$dir/caddy/config" "$dir/www" "$dir/web"
rm -f -- "$dir/$pidfile_rel"

# --- the admin CLI ------------------------------------------------------------------------------------
if [[ -n ${HOSTPLANE:-} ]]; then
  read -r -a hostplane <<<"$HOSTPLANE"
else
  # `--import tsx` resolves from the working directory: give node the loader's own URL instead,
  # so the script works from anywhere (and a relative DATABASE_URL means the caller's directory).
  tsx=$(cd -- "$repo" && node --input-type=module -e 'console.log(import.meta.resolve("tsx"))' 2>/dev/null) ||
    die "tsx is not installed in $repo (run npm ci there), or set HOSTPLANE to the hostplane command."
  hostplane=(node --import "$tsx" "$repo/src/main.ts")
fi

# --- Caddy ------------------------------------------------------------------------------------------
caddy_pid=
finished=
# SIGTERM to <pid> when it is alive, then SIGKILL when it still is after 10 s.
terminate() {
  alive "$1" || return 0
  kill -TERM "$1" 2>/dev/null || true
  for _ in $(seq 1 100); do
    alive "$1" || return 0
    sleep 0.1
  done
  kill -KILL "$1" 2>/dev/null || true
}
# Our own child: its pid cannot be reused before this shell is gone, so being alive is enough.
stop_caddy() {
  [[ -n $caddy_pid ]] || return 0
  terminate "$caddy_pid"
  rm -f -- "$dir/$pidfile_rel"
  caddy_pid=
}
# Dovecot and Postfix, once this script has started them (their masters' pid files tell the pids).
mail_started=
stop_mail() {
  [[ -n $mail_started ]] || return 0
  local rel pid any=
  for rel in "$postfix_pid_rel:master" "$dovecot_pid_rel:dovecot"; do
    pid=$(head -n 1 -- "$dir/${rel%:*}" 2>/dev/null || true)
    pid=${pid//[[:space:]]/}
    live_as "$pid" "${rel#*:}" || continue
    terminate "$pid"
    rm -f -- "$dir/${rel%:*}"
    any=1
  done
  mail_started=
  if [[ -n $any ]]; then printf '%s: stopped the Dovecot and Postfix it had started.\n' "$prog" >&2; fi
}
# rspamd, once this script has started it (our own child, as Caddy).
rspamd_pid=
stop_rspamd() {
  [[ -n $rspamd_pid ]] || return 0
  terminate "$rspamd_pid"
  rm -f -- "$dir/$rspamd_pid_rel"
  rspamd_pid=
  printf '%s: stopped the rspamd it had started.\n' "$prog" >&2
}
# The mail policy service, once this script has started it (our own child, as Caddy).
policy_pid=
stop_policy() {
  [[ -n $policy_pid ]] || return 0
  terminate "$policy_pid"
  rm -f -- "$dir/$policy_pid_rel"
  policy_pid=
  printf '%s: stopped the mail policy service it had started.\n' "$prog" >&2
}
# Knot, once this script has started it (our own child, as Caddy), and the registration it added:
# a registered secondary that does not answer makes every DNS job fail.
knot_pid=
knot_registered=
stop_knot() {
  if [[ -n $knot_pid ]]; then
    terminate "$knot_pid"
    rm -f -- "$dir/$knot_pid_rel"
    knot_pid=
    printf '%s: stopped the Knot it had started.\n' "$prog" >&2
  fi
  [[ -n $knot_registered ]] || return 0
  knot_registered=
  if "${hostplane[@]}" admin dns-secondary remove "$secondary_name" >/dev/null; then
    rm -f -- "$dir/dns/registration.json"
    printf '%s: removed the DNS secondary "%s" it had registered.\n' "$prog" "$secondary_name" >&2
  else
    printf '%s: could not remove the DNS secondary "%s" it had registered (the CLI said why above); every DNS job fails while it is registered: run hostplane admin dns-secondary remove %s\n' \
      "$prog" "$secondary_name" "$secondary_name" >&2
  fi
}
# The private sshd, once this script has started it (our own child, as Caddy).
sftp_pid=
stop_sftp() {
  [[ -n $sftp_pid ]] || return 0
  terminate "$sftp_pid"
  rm -f -- "$dir/$sftp_pid_rel"
  sftp_pid=
}
# The web and mail server this run added to the store ("web-server <name>", "mail-server <name>"):
# a failed run takes them out again, so a second try with another port-base is not refused.
added=()
remove_added() {
  local i kind server
  for ((i = ${#added[@]} - 1; i >= 0; i--)); do
    kind=${added[i]%% *} server=${added[i]#* }
    if "${hostplane[@]}" admin "$kind" remove "$server" >/dev/null; then
      printf '%s: removed the %s "%s" it had registered.\n' "$prog" "${kind/-/ }" "$server" >&2
    else
      printf '%s: could not remove the %s "%s" it had registered (the CLI said why above): run hostplane admin %s remove %s\n' \
        "$prog" "${kind/-/ }" "$server" "$kind" "$server" >&2
    fi
  done
  added=()
}
# Whatever goes wrong before the stack is up, what was started here does not stay behind.
on_exit() {
  local rc=$?
  if [[ -z $finished ]]; then
    stop_sftp
    stop_knot
    stop_rspamd
    stop_mail
    stop_policy
    if [[ -n $caddy_pid ]]; then
      stop_caddy
      printf '%s: stopped the Caddy it had started.\n' "$prog" >&2
    fi
    remove_added
  fi
  exit "$rc"
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Only the admin API: hostplane pushes the whole desired config (no --resume). Caddy's storage
# (its internal CA) and autosave go to HOME/XDG dirs under <dir>/caddy; nothing installs trust.
jq -n --arg listen "127.0.0.1:$admin_port" '{admin: {listen: $listen}}' >"$dir/caddy/initial.json"
log=$dir/caddy/caddy.log
(
  cd -- "$dir/caddy"
  # No job control here, so setsid does not fork: $! is caddy's own pid.
  HOME=$dir/caddy/home XDG_DATA_HOME=$dir/caddy/data XDG_CONFIG_HOME=$dir/caddy/config \
    exec setsid nohup caddy run --config "$dir/caddy/initial.json" --pidfile "$dir/$pidfile_rel" </dev/null >>"$log" 2>&1
) &
caddy_pid=$!
printf '%s\n' "$caddy_pid" >"$dir/$pidfile_rel"

caddy_ready() { curl -fsS --max-time 1 -o /dev/null "http://127.0.0.1:$admin_port/config/" 2>/dev/null; }
await_ready caddy caddy_pid "$dir/$pidfile_rel" "$log" 15 "caddy's admin API did not answer at http://127.0.0.1:$admin_port" caddy_ready
live_as "$caddy_pid" caddy || die "caddy exited right after start (log: $log)."

# --- PHP-FPM: the installed versions ------------------------------------------------------------------
php_args=()
php_found=()
for bin in /usr/sbin/php-fpm*; do
  v=${bin#/usr/sbin/php-fpm}
  if [[ $v =~ ^[0-9]+\.[0-9]+$ && -x $bin ]]; then
    php_args+=(--php "$v=$bin")
    php_found+=("$v ($bin)")
  fi
done

# --- registration -------------------------------------------------------------------------------------
admin_url=http://127.0.0.1:$admin_port
http_listen=127.0.0.1:$http_port
https_listen=127.0.0.1:$https_port
home_root=$dir/www
state_dir=$dir/web
# SFTP: the stack's sshd listens on port-base+20; customers see it as the packages' sftp_port
# (22, the registration's default, when port-base+20 is no port: there is no sshd then).
sftp_port=$((base + 20))
((sftp_port <= 65535)) || sftp_port=22

listed=$("${hostplane[@]}" admin web-server list --json) ||
  die "could not read the web servers of DATABASE_URL (the CLI said why above; a new store needs \`hostplane migrate\` first)."
existing=$(jq -c --arg n "$name" '[.[] | select(.name == $n)][0] // empty' <<<"$listed") ||
  die "the CLI's web server list is not JSON: $listed"
if [[ -n $existing ]]; then
  # The same server only if it points at this stack: otherwise hostplane would drive another Caddy.
  differs=$(jq -r --arg a "$admin_url" --arg h "$http_listen" --arg s "$https_listen" --arg r "$home_root" --arg d "$state_dir" '
    [ (if .caddy_admin != $a then "caddy admin \(.caddy_admin)" else empty end),
      (if .http_listen != $h then "HTTP \(.http_listen)" else empty end),
      (if .https_listen != $s then "HTTPS \(.https_listen)" else empty end),
      (if .home_root != $r then "home root \(.home_root)" else empty end),
      (if .state_dir != $d then "state dir \(.state_dir)" else empty end) ] | join(", ")' <<<"$existing")
  if [[ -n $differs ]]; then
    die "web server \"$name\" is registered in this store already, but for another stack ($differs); use the same <dir> and port-base, or another name: STACK_WEB_NAME=<name> $0 ..., or unregister it: hostplane admin web-server remove $name"
  fi
  registration="web server \"$name\" was registered in this store already: not added again"
  # A registration from before SFTP (port 22): point it at this stack's sshd.
  if [[ $(jq -r '.sftp_port // empty' <<<"$existing") != "$sftp_port" ]]; then
    "${hostplane[@]}" admin web-server set "$name" --sftp-port "$sftp_port" >/dev/null ||
      die "could not set the SFTP port of web server \"$name\" (the CLI said why above)."
  fi
else
  "${hostplane[@]}" admin web-server add --name "$name" --caddy-admin "$admin_url" --http-listen "$http_listen" \
    --https-listen "$https_listen" --address 127.0.0.1 --home-root "$home_root" --state-dir "$state_dir" --sftp-port "$sftp_port" "${php_args[@]}" >/dev/null ||
    die "could not register web server \"$name\" (the CLI said why above)."
  registration="registered web server \"$name\" in this store"
  added+=("web-server $name")
fi


# --- mail: Dovecot and Postfix on the store's mail directory -----------------------------------------
# The users mail (mailboxes), dovecot and postfix (their daemons) must be able to enter <dir>.
if [[ -z $mail_missing ]]; then
  mkdir -p -- "$dir/mail"
  for user in mail dovecot postfix; do
    if ! setpriv --reuid="$user" --regid="$(id -g "$user")" --init-groups test -x "$dir/mail" 2>/dev/null; then
      mail_missing="user $user cannot enter $dir (every directory above it needs o+x)"
      break
    fi
  done
fi
# rspamd: its user must enter <dir> too; Postfix's milter is rspamd's (port-base+14), or none.
if [[ -z $mail_missing && -z $rspamd_missing ]]; then
  if ! setpriv --reuid=_rspamd --regid="$(id -g _rspamd)" --init-groups test -x "$dir/mail" 2>/dev/null; then
    rspamd_missing="user _rspamd cannot enter $dir (every directory above it needs o+x)"
  fi
fi

random_hex() {
  od -An -tx1 -N16 /dev/urandom | tr -d ' \n'
}
mail_db=
if [[ -z $mail_missing ]]; then
  if [[ $DATABASE_URL =~ ^postgres(ql)?:// ]]; then
    command -v psql >/dev/null || mail_missing="psql is not installed (up.sh makes the mail servers' read-only role with it)"
  fi
fi
if [[ -z $mail_missing && $DATABASE_URL =~ ^postgres(ql)?:// ]]; then
  # The parts of postgres://user[:password]@host[:port]/database[?schema=name] (hostplane's ?schema=).
  parts=$(node -e '
    const u = new URL(process.argv[1]);
    const d = (s) => decodeURIComponent(s);
    console.log(JSON.stringify({ host: u.hostname.replace(/^\[|\]$/g, ""), port: u.port || "5432", user: d(u.username),
      password: d(u.password), db: d(u.pathname.slice(1)), schema: u.searchParams.get("schema") ?? "" }));' "$DATABASE_URL") ||
    die "DATABASE_URL is not a URL node can read."
  pg_host=$(jq -r .host <<<"$parts")
  pg_port=$(jq -r .port <<<"$parts")
  pg_user=$(jq -r .user <<<"$parts")
  pg_password=$(jq -r .password <<<"$parts")
  pg_db=$(jq -r .db <<<"$parts")
  pg_schema=$(jq -r .schema <<<"$parts")
  if [[ -z $pg_host || -z $pg_db ]]; then
    mail_missing="DATABASE_URL names no host or no database (the mail servers connect over TCP)"
  fi
fi
if [[ -z $mail_missing && $DATABASE_URL =~ ^postgres(ql)?:// ]]; then
  psql_admin() {
    PGHOST=$pg_host PGPORT=$pg_port PGUSER=${pg_user:-$USER} PGPASSWORD=$pg_password PGDATABASE=$pg_db PGCONNECT_TIMEOUT=10 \
      psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"
  }
  # The schema hostplane's tables are in: ?schema= or the session's first (public).
  [[ -n $pg_schema ]] || pg_schema=$(psql_admin -c 'select current_schema()') ||
    die "could not connect to DATABASE_URL with psql (it said why above)."
  can_create=$(psql_admin -c 'select rolsuper or rolcreaterole from pg_roles where rolname = current_user') ||
    die "could not connect to DATABASE_URL with psql (it said why above)."
  tables="'mail_domains','mail_users','mail_app_passwords','mail_aliases','mail_sieve'"
  if [[ $can_create == t ]]; then
    reader=$(printf 'hostplane_mail_%s_%s' "$pg_db" "$pg_schema" | tr 'A-Z' 'a-z' | tr -c 'a-z0-9_' '_')
    if ((${#reader} > 63)); then
      reader="${reader:0:54}_$(printf '%s' "$reader" | sha256sum | head -c 8)"
    fi
    reader_password=$(random_hex)
    # A new password each time: nobody but this stack's configs knows it.
    psql_admin -v role="$reader" -v pw="$reader_password" -v schema="$pg_schema" >/dev/null <<SQL ||
SELECT format('CREATE ROLE %I LOGIN', :'role') WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'role') \gexec
SELECT format('ALTER ROLE %I LOGIN PASSWORD %L', :'role', :'pw') \gexec
SELECT format('ALTER ROLE %I SET default_transaction_read_only = on', :'role') \gexec
SELECT format('GRANT CONNECT ON DATABASE %I TO %I', current_database(), :'role') \gexec
SELECT format('GRANT USAGE ON SCHEMA %I TO %I', :'schema', :'role') \gexec
SELECT format('GRANT SELECT ON %I.%I TO %I', table_schema, table_name, :'role') FROM information_schema.tables
  WHERE table_schema = :'schema' AND table_name IN ($tables) \gexec
SQL
      die "could not make the mail servers' read-only role $reader (psql said why above)."
    mail_db="PostgreSQL as the read-only role $reader"
  else
    reader=$pg_user
    reader_password=$pg_password
    mail_db="PostgreSQL as $pg_user (it may not create roles, so there is no read-only one)"
  fi
  missing_tables=$(psql_admin -v schema="$pg_schema" <<SQL
SELECT string_agg(t, ', ' ORDER BY t) FROM unnest(ARRAY[$tables]) t
  WHERE NOT EXISTS (SELECT 1 FROM information_schema.tables WHERE table_schema = :'schema' AND table_name = t)
SQL
  ) || die "could not read the tables of DATABASE_URL (psql said why above)."
  # The readers run as their own users (production's way); the renderer takes that from the driver.
  store_json=$(jq -n --arg h "$pg_host" --argjson p "$pg_port" --arg d "$pg_db" --arg u "$reader" --arg pw "$reader_password" --arg s "$pg_schema" \
    '{driver: "pgsql", host: $h, port: $p, dbname: $d, user: $u, password: $pw, schema: $s}')
elif [[ -z $mail_missing ]]; then
  # A file path or sqlite: URL, as hostplane reads it; relative to the caller's directory.
  db_file=$DATABASE_URL
  shopt -s nocasematch
  [[ $db_file != sqlite:* ]] || db_file=${db_file:7}
  shopt -u nocasematch
  if [[ $db_file == ///* || $db_file == //* ]]; then db_file=${db_file:2}; fi
  [[ $db_file == /* ]] || db_file=$PWD/$db_file
  if [[ $db_file == */:memory: ]]; then
    mail_missing="an in-memory store cannot be read by other processes"
  else
    # No grants on SQLite: tables a later migration adds are read as they appear.
    missing_tables=
    store_json=$(jq -n --arg f "$db_file" '{driver: "sqlite", path: $f}')
    mail_db="SQLite $db_file"
    # The renderer runs the readers as root on SQLite: the store's directory may be one only root
    # can enter (production: a directory group-writable for dovecot and postfix, as WAL readers
    # write the -shm file).
  fi
fi

mail_json=null
if [[ -z $mail_missing ]]; then
  mail=$dir/mail
  mkdir -p -- "$mail/dovecot" "$mail/postfix" "$mail/run" "$mail/state" "$mail/spool" "$mail/data" "$mail/vmail"
  chmod 0755 -- "$mail" "$mail/dovecot" "$mail/postfix"
  chown mail:mail -- "$mail/vmail"
  chmod 0700 -- "$mail/vmail"
  chown postfix: -- "$mail/data"
  if [[ ! -s $mail/doveadm.key ]]; then
    (umask 077 && random_hex >"$mail/doveadm.key.tmp" && mv -f -- "$mail/doveadm.key.tmp" "$mail/doveadm.key")
  fi
  chmod 0600 -- "$mail/doveadm.key"
  # Dovecot reports each login to hostplane (the application passwords' last_used_at), naming itself
  # with a key derived from its doveadm key (src/provisioning/mail/servers.repository.ts
  # mailReportKey): the header goes with every login and must not open the doveadm API. rspamd's
  # settings map names the server with the same key.
  doveadm_key=$(tr -d '[:space:]' <"$mail/doveadm.key")
  report_key=$(printf 'hostplane-mail-auth-report:%s' "$doveadm_key" | sha256sum | cut -d' ' -f1)

  # rspamd's directories (its files are rendered with the others below): LOCAL_CONFDIR local/ for
  # _rspamd's group, its state db/ and its log, private as it names the settings map's URL with the key.
  rspamd_facts=null
  if [[ -z $rspamd_missing ]]; then
    rspamd_dir=$mail/rspamd
    mkdir -p -- "$rspamd_dir/local/local.d" "$rspamd_dir/local/override.d" "$rspamd_dir/db"
    chmod 0755 -- "$rspamd_dir"
    chgrp _rspamd -- "$rspamd_dir/local" "$rspamd_dir/local/local.d" "$rspamd_dir/local/override.d"
    chmod 0750 -- "$rspamd_dir/local" "$rspamd_dir/local/local.d" "$rspamd_dir/local/override.d"
    chown _rspamd: -- "$rspamd_dir/db"
    touch -- "$rspamd_dir/rspamd.log"
    chown _rspamd: -- "$rspamd_dir/rspamd.log"
    chmod 0600 -- "$rspamd_dir/rspamd.log"
    # The compiled expressions, shared by the stacks (a cold start compiles for 10 to 30 s): only a
    # directory _rspamd owns, or the stack's own.
    hs_cache=/var/tmp/hostplane-rspamd-hs
    if [[ ! -e $hs_cache && ! -L $hs_cache ]]; then
      mkdir -m 0755 -- "$hs_cache" 2>/dev/null && chown _rspamd: -- "$hs_cache" || true
    fi
    if [[ -L $hs_cache || ! -d $hs_cache || $(stat -c %U -- "$hs_cache") != _rspamd ]]; then
      hs_cache=$rspamd_dir/hs
      mkdir -p -- "$hs_cache"
      chown _rspamd: -- "$hs_cache"
    fi
    rspamd_facts=$(jq -n --arg h "$hs_cache" '{hsCacheDir: $h}')
  fi

  # Postfix's certificate (submission, STARTTLS on SMTP): self-signed, made once and kept; clients
  # trust cert.pem itself.
  tls_dir=$mail/tls
  if [[ ! -s $tls_dir/cert.pem || ! -s $tls_dir/key.pem ]]; then
    mkdir -p -- "$tls_dir"
    chmod 0755 -- "$tls_dir"
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=mail.hostplane.test" \
      -addext "subjectAltName=DNS:mail.hostplane.test,IP:127.0.0.1" -addext "basicConstraints=critical,CA:TRUE" \
      -keyout "$tls_dir/key.pem.tmp" -out "$tls_dir/cert.pem.tmp" 2>/dev/null ||
      die "openssl could not make the mail servers' certificate in $tls_dir."
    chmod 0600 -- "$tls_dir/key.pem.tmp"
    chmod 0644 -- "$tls_dir/cert.pem.tmp"
    mv -f -- "$tls_dir/key.pem.tmp" "$tls_dir/key.pem"
    mv -f -- "$tls_dir/cert.pem.tmp" "$tls_dir/cert.pem"
  fi
  tls_facts=$(jq -n --arg c "$tls_dir/cert.pem" --arg k "$tls_dir/key.pem" '{cert: $c, key: $k}')

  # Every file of Dovecot, Postfix and rspamd, from the renderer's private profile (hostplane node
  # render; docs/decisions/0018-nodes-on-debian.md): the same ports and paths as named above.
  facts=$mail/facts.json
  (umask 077 && jq -n --arg dir "$dir" --argjson base "$base" --arg name "$name" --arg url "$hostplane_url" --arg key "$doveadm_key" \
    --argjson store "$store_json" --argjson uid "$(id -u mail)" --argjson gid "$(id -g mail)" --argjson rspamd "$rspamd_facts" \
    --argjson tls "$tls_facts" \
    '{dir: $dir, portBase: $base, name: $name, apiUrl: $url, doveadmKey: $key, store: $store, mailUid: $uid, mailGid: $gid, rspamd: $rspamd, tls: $tls}' >"$facts")
  "${hostplane[@]}" node render --profile private --facts "$facts" --out "$dir" >/dev/null ||
    die "could not render the mail servers' files (the CLI said why above)."
  rm -f -- "$facts"

  # The mail policy service before Postfix: without it the submission services defer every recipient.
  rm -f -- "$dir/$policy_pid_rel"
  policy_log=$mail/policy/policy.log
  (
    cd -- "$mail/policy"
    # No job control: setsid does not fork and exec keeps the pid, so $! is node's own (as for Caddy).
    exec setsid nohup "${hostplane[@]}" node mail-policy --config "$mail/policy/mail-policy.json" </dev/null >>"$policy_log" 2>&1
  ) &
  policy_pid=$!
  printf '%s\n' "$policy_pid" >"$dir/$policy_pid_rel"
  await_ready "the mail policy service" policy_pid "$dir/$policy_pid_rel" "$policy_log" 30 \
    "the mail policy service did not listen on 127.0.0.1:$policy_port" port_taken "$policy_port"
  mail_policy_live "$policy_pid" || die "the mail policy service exited right after start (log: $policy_log)."

  mail_started=1
  rm -f -- "$dir/$dovecot_pid_rel" "$dir/$postfix_pid_rel"
  # Both daemonize; with stdio closed, as they do not let go of a terminal they were given.
  dovecot -c "$mail/dovecot/dovecot.conf" </dev/null >>"$mail/dovecot.log" 2>&1 ||
    die "dovecot did not start; the end of $mail/dovecot.log:
$(tail -n 20 -- "$mail/dovecot.log")"
  postfix -c "$mail/postfix" start </dev/null >>"$mail/postfix.log" 2>&1 ||
    die "postfix did not start; the end of $mail/postfix.log:
$(tail -n 20 -- "$mail/postfix.log")"
  deadline=$((SECONDS + 15))
  until port_taken "$smtp_port" && port_taken "$imap_port" && port_taken "$lmtp_port" && port_taken "$doveadm_port" &&
    port_taken "$submission_port" && port_taken "$submissions_port"; do
    ((SECONDS < deadline)) || die "Dovecot and Postfix did not listen on $smtp_port to $doveadm_port, $submission_port and $submissions_port within 15 s (logs: $mail/dovecot.log, $mail/postfix.log)."
    sleep 0.1
  done
  dovecot_pid=$(head -n 1 -- "$dir/$dovecot_pid_rel" 2>/dev/null || true)
  postfix_pid=$(head -n 1 -- "$dir/$postfix_pid_rel" 2>/dev/null || true)
  dovecot_pid=${dovecot_pid//[[:space:]]/}
  postfix_pid=${postfix_pid//[[:space:]]/}
  live_as "$dovecot_pid" dovecot || die "dovecot's master is not running (log: $mail/dovecot.log)."
  live_as "$postfix_pid" master || die "postfix's master is not running (log: $mail/postfix.log)."
  mail_json=$(jq -n --arg smtp "127.0.0.1:$smtp_port" --arg imap "127.0.0.1:$imap_port" --arg lmtp "127.0.0.1:$lmtp_port" \
    --arg doveadm "http://127.0.0.1:$doveadm_port" --arg sub "127.0.0.1:$submission_port" --arg subs "127.0.0.1:$submissions_port" \
    --arg ca "$tls_dir/cert.pem" --arg policy "127.0.0.1:$policy_port" \
    '{smtp: $smtp, imap: $imap, lmtp: $lmtp, doveadm: $doveadm, submission: $sub, submissions: $subs, tls_ca: $ca, policy: $policy}')

  # The mail server in the store, under the web server's name (STACK_WEB_NAME): packages without a
  # mail server are placed on it at their first address when it is the default (the first one is).
  mail_listed=$("${hostplane[@]}" admin mail-server list --json) ||
    die "could not read the mail servers of DATABASE_URL (the CLI said why above)."
  mail_existing=$(jq -c --arg n "$name" '[.[] | select(.name == $n)][0] // empty' <<<"$mail_listed") ||
    die "the CLI's mail server list is not JSON: $mail_listed"
  if [[ -n $mail_existing ]]; then
    differs=$(jq -r --arg d "http://127.0.0.1:$doveadm_port" --arg s "127.0.0.1:$smtp_port" --arg i "127.0.0.1:$imap_port" '
      [ (if .doveadm_url != $d then "doveadm \(.doveadm_url)" else empty end),
        (if .smtp != $s then "SMTP \(.smtp)" else empty end),
        (if .imap != $i then "IMAP \(.imap)" else empty end) ] | join(", ")' <<<"$mail_existing")
    [[ -z $differs ]] ||
      die "mail server \"$name\" is registered in this store already, but for another stack ($differs); use the same <dir> and port-base, or another name: STACK_WEB_NAME=<name> $0 ..., or unregister it: hostplane admin mail-server remove $name"
    registration+="; mail server \"$name\" was registered already"
  else
    "${hostplane[@]}" admin mail-server add --name "$name" --doveadm-url "http://127.0.0.1:$doveadm_port" --doveadm-key-file "$mail/doveadm.key" \
      --smtp "127.0.0.1:$smtp_port" --imap "127.0.0.1:$imap_port" >/dev/null ||
      die "could not register mail server \"$name\" (the CLI said why above)."
    registration+="; registered mail server \"$name\""
    added+=("mail-server $name")
  fi
fi

# --- rspamd: Postfix's milter, the antispam modes from hostplane -----------------------------------------
# Started once the mail server is registered: its first request for the settings map must find the
# key (rspamd asks again only 20 to 40 s later when that request fails).
if [[ -z $mail_missing && -z $rspamd_missing ]]; then
  rm -f -- "$dir/$rspamd_pid_rel"
  rspamd_log=$rspamd_dir/rspamd.log
  (
    cd -- "$rspamd_dir"
    # In the foreground (-f), so $! is rspamd's own pid, as for Caddy; its workers run as _rspamd.
    exec setsid nohup rspamd -f -u _rspamd -g _rspamd -c "$rspamd_dir/rspamd.conf" \
      --var "LOCAL_CONFDIR=$rspamd_dir/local" --var "DBDIR=$rspamd_dir/db" </dev/null >>"$rspamd_log" 2>&1
  ) &
  rspamd_pid=$!
  printf '%s\n' "$rspamd_pid" >"$dir/$rspamd_pid_rel"
  rspamd_ready() {
    port_taken "$rspamd_milter_port" && [[ $(curl -fsS --max-time 1 "http://127.0.0.1:$rspamd_controller_port/ping" 2>/dev/null) == pong* ]]
  }
  # A cold start (nothing in the shared cache yet) compiles for up to half a minute.
  await_ready rspamd rspamd_pid "$dir/$rspamd_pid_rel" "$rspamd_log" 90 \
    "rspamd did not answer on 127.0.0.1:$rspamd_milter_port and $rspamd_controller_port" rspamd_ready
  rspamd_live "$rspamd_pid" || die "rspamd exited right after start (log: $rspamd_log)."
  mail_json=$(jq -c --arg m "127.0.0.1:$rspamd_milter_port" --arg c "http://127.0.0.1:$rspamd_controller_port" \
    '. + {rspamd: {milter: $m, controller: $c}}' <<<"$mail_json")
fi
# --- end of rspamd ---------------------------------------------------------------------------------------

# --- the DNS secondary: Knot, fed by hostplane's DNS server through its catalog zone ----------------------
# Knot's control socket is a Unix socket: its path must fit in 107 bytes. knot.conf quotes the paths.
if [[ -n $dns_secondary && -z $knot_missing ]]; then
  if ((${#dir} + 14 > 107)); then
    knot_missing="Knot's control socket $dir/dns/knot.sock would be longer than 107 bytes (a Unix socket path): use a shorter <dir>"
  elif [[ $dir == *[\"\\]* ]]; then
    knot_missing="$dir holds a quote or backslash, which knot.conf cannot name"
  fi
fi
dns_json=null
if [[ -n $dns_secondary && -z $knot_missing ]]; then
  dns=$dir/dns
  mkdir -p -- "$dns"
  chmod 0700 -- "$dns"
  knot_listen=127.0.0.1:$knot_port
  # The TSIG key, named after the secondary and this stack's directory (so a registration of that
  # name for another directory shows); kept across runs, so the registration stays valid.
  key_name=$secondary_name-$(printf '%s' "$dir" | sha256sum | head -c 8)
  key_file=$dns/tsig.key
  key_new=
  key_secret=
  if [[ -f $key_file ]]; then
    key_text=$(cat -- "$key_file")
    if [[ $key_text =~ key[[:space:]]+\"([^\"]+)\" ]] && [[ ${BASH_REMATCH[1]} == "$key_name" ]] &&
      [[ $key_text =~ secret[[:space:]]+\"([A-Za-z0-9+/=]+)\" ]]; then
      key_secret=${BASH_REMATCH[1]}
    fi
  fi
  if [[ -z $key_secret ]]; then
    key_secret=$(head -c 32 /dev/urandom | base64 | tr -d '\n')
    (umask 077 && printf 'key "%s" {\n\talgorithm hmac-sha256;\n\tsecret "%s";\n};\n' "$key_name" "$key_secret" >"$key_file.tmp" &&
      mv -f -- "$key_file.tmp" "$key_file")
    key_new=1
  fi
  chmod 0600 -- "$key_file"

  # knot.conf from the renderer node setup uses (hostplane node render-knot), zones in the journal only.
  # A development stack: a missed NOTIFY heals within a minute, a primary that was down is asked
  # again every 10 s (hostplane's SOA says 3600 and 600).
  knot_facts=$dns/knot-facts.json
  (umask 077 && jq -n --arg dns "$dns" --arg listen "127.0.0.1@$knot_port" --arg kn "$key_name" --arg ks "$key_secret" \
    --arg ph "$primary_host" --argjson pp "$primary_port" --arg c "$catalog" \
    '{listen: [$listen], rundir: $dns, storage: $dns, log: "\($dns)/knot.log", control: "\($dns)/knot.sock",
      key: {name: $kn, secret: $ks}, primary: {host: $ph, port: $pp}, via: "127.0.0.1", catalogZone: $c,
      refreshMaxS: 60, retryMaxS: 10}' >"$knot_facts")
  # The facts hold the key's secret: gone before anything else can fail.
  knot_rendered=1
  "${hostplane[@]}" node render-knot --facts "$knot_facts" --out "$dns/knot.conf" >/dev/null || knot_rendered=
  rm -f -- "$knot_facts"
  [[ -n $knot_rendered ]] || die "could not write Knot's $dns/knot.conf (the CLI said why above)."

  # Registered before Knot starts: hostplane answers its first transfer only then.
  dns_listed=$("${hostplane[@]}" admin dns-secondary list --json) ||
    die "could not read the DNS secondaries of DATABASE_URL (the CLI said why above)."
  dns_existing=$(jq -c --arg n "$secondary_name" '[.[] | select(.name == $n)][0] // empty' <<<"$dns_listed") ||
    die "the CLI's DNS secondary list is not JSON: $dns_listed"
  register_secondary() {
    "${hostplane[@]}" admin dns-secondary add --name "$secondary_name" --address "$knot_listen" --tsig-key-file "$key_file" >/dev/null ||
      die "could not register DNS secondary \"$secondary_name\" (the CLI said why above)."
    knot_registered=1
  }
  if [[ -n $dns_existing ]]; then
    differs=$(jq -r --arg a "$knot_listen" --arg k "$key_name" '
      [ (if .address != $a then "address \(.address)" else empty end),
        (if .tsig_key != $k then "TSIG key \(.tsig_key)" else empty end) ] | join(", ")' <<<"$dns_existing")
    [[ -z $differs ]] ||
      die "DNS secondary \"$secondary_name\" is registered in this store already, but for another stack ($differs); use the same <dir> and port-base, or another name: STACK_WEB_NAME=<name> $0 ..."
    if [[ -n $key_new ]]; then
      # Registered with a secret this directory no longer has (its key file was gone): the new one.
      "${hostplane[@]}" admin dns-secondary remove "$secondary_name" >/dev/null ||
        die "could not replace DNS secondary \"$secondary_name\", registered with a key $key_file no longer holds (the CLI said why above)."
      register_secondary
      registration+="; registered DNS secondary \"$secondary_name\" again with a new key"
    else
      registration+="; DNS secondary \"$secondary_name\" was registered already"
    fi
  else
    register_secondary
    registration+="; registered DNS secondary \"$secondary_name\""
  fi
  # What down.sh needs to remove the registration: the store, absolute as the CLI read it here.
  (umask 077 && jq -n --arg n "$secondary_name" --arg a "$knot_listen" --arg k "$key_name" --arg d "$store_url" \
    '{name: $n, address: $a, tsig_key: $k, database_url: $d}' >"$dns/registration.json.tmp" &&
    mv -f -- "$dns/registration.json.tmp" "$dns/registration.json")

  rm -f -- "$dir/$knot_pid_rel"
  knot_log=$dns/knot.log
  (
    cd -- "$dns"
    # In the foreground, so $! is knotd's own pid, as for Caddy; knotd writes knot.pid itself.
    exec setsid nohup "$knotd" -c "$dns/knot.conf" </dev/null >>"$knot_log" 2>&1
  ) &
  knot_pid=$!
  await_ready knotd knot_pid "$dir/$knot_pid_rel" "$knot_log" 15 "knotd did not listen on $knot_listen" port_taken "$knot_port"
  live_as "$knot_pid" knotd || die "knotd exited right after start (log: $knot_log)."
  # Knot serves its zones from the journal as they were; it asks hostplane for what changed while it
  # was down at once, not after up to refresh-max (a minute). Without an answer, that minute it is.
  for _ in {1..30}; do
    "$knotc" -s "$dns/knot.sock" zone-refresh >/dev/null 2>&1 && break
    sleep 0.1
  done
  printf '%s\n' "$knot_pid" >"$dir/$knot_pid_rel"
  primary_answers=
  if (exec 3<>"/dev/tcp/$primary_host/$primary_port") 2>/dev/null; then primary_answers=1; fi
  dns_json=$(jq -n --arg n "$secondary_name" --arg l "$knot_listen" --arg p "$primary_host:$primary_port" --arg c "$catalog" \
    --arg k "$key_name" --arg f "$key_file" \
    '{secondary: {name: $n, engine: "knot", listen: $l, primary: $p, catalog_zone: $c, tsig_key: $k, key_file: $f}}')
fi
# --- end of the DNS secondary ----------------------------------------------------------------------------

# --- SFTP: the private sshd in a mount namespace of its own --------------------------------------------
sftp_json=null
sftp=$dir/sftp
users=$state_dir/users
if [[ -z $sftp_missing && ( $dir == /run || $dir == /run/* ) ]]; then
  sftp_missing="<dir> is below /run, which sshd's namespace replaces"
fi
# As the package users do (PHP, sshd reading their key files): through every directory above <dir>.
if [[ -z $sftp_missing ]] && ! setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$state_dir" 2>/dev/null; then
  sftp_missing="users other than root cannot enter $dir (every directory above it needs o+x)"
fi
if [[ -z $sftp_missing ]]; then
  mkdir -p -- "$sftp" "$users" "$state_dir/ssh/authorized_keys"
  # sshd's chroot rule (root's, not group- or world-writable) for the homes' dir; the keys' dirs open to the users.
  chmod 0755 -- "$home_root" "$state_dir" "$state_dir/ssh" "$state_dir/ssh/authorized_keys"
  host_key=$sftp/ssh_host_ed25519_key
  if [[ ! -f $host_key ]]; then
    ssh-keygen -q -t ed25519 -N '' -C "hostplane local stack $name" -f "$host_key" || die "ssh-keygen could not make the stack's host key $host_key."
  fi
  # The machine's users and groups as they are now, then the packages' (ids from 2000000 on) as the web worker added them.
  for f in passwd group; do
    { cat "/etc/$f"; if [[ -f $users/$f ]]; then awk -F: '$3 >= 2000000' "$users/$f"; fi; } >"$users/$f.new"
    # In place: a running sshd's bind mount would keep a file that was renamed over.
    cat -- "$users/$f.new" >"$users/$f"
    rm -f -- "$users/$f.new"
  done
  chmod 0644 -- "$users/passwd" "$users/group"
  chroot_root=/run/hostplane-sftp/www
  "${hostplane[@]}" node render-sshd --listen "127.0.0.1:$sftp_port" --host-key "$host_key" --pid-file "$dir/$sftp_pid_rel" \
    --chroot-root "$chroot_root" --state-dir "$state_dir" --out "$sftp/sshd_config" >/dev/null ||
    die "could not write $sftp/sshd_config (the CLI said why above)."
  sftp_log=$sftp/sshd.log
  rm -f -- "$dir/$sftp_pid_rel"
  (
    # unshare and sh exec: $! is sshd's own pid. The namespace ends with sshd's last process.
    exec setsid nohup unshare --mount --propagation private -- /bin/sh -c '
      set -e
      mount -t tmpfs -o mode=0755 hostplane-sftp /run
      mkdir -p /run/sshd "$5"
      mount --bind "$1" "$5"
      mount --bind "$2/passwd" /etc/passwd
      mount --bind "$2/group" /etc/group
      exec /usr/sbin/sshd -D -f "$3" -E "$4"' sh "$home_root" "$users" "$sftp/sshd_config" "$sftp_log" "$chroot_root" </dev/null >>"$sftp_log" 2>&1
  ) &
  sftp_pid=$!
  printf '%s\n' "$sftp_pid" >"$dir/$sftp_pid_rel"
  await_ready sshd sftp_pid "$dir/$sftp_pid_rel" "$sftp_log" 15 "sshd did not listen on 127.0.0.1:$sftp_port" port_taken "$sftp_port"
  sshd_live "$sftp_pid" || die "sshd exited right after start (log: $sftp_log)."
  # What clients check the host key with.
  printf '[127.0.0.1]:%s %s\n' "$sftp_port" "$(cut -d' ' -f1-2 <"$host_key.pub")" >"$sftp/known_hosts"
  host_fp=$(ssh-keygen -l -E sha256 -f "$host_key.pub" | cut -d' ' -f2)
  sftp_json=$(jq -n --argjson p "$sftp_port" --arg fp "$host_fp" --arg kh "$sftp/known_hosts" --arg log "$sftp_log" \
    '{host: "127.0.0.1", port: $p, host_key_fingerprint: $fp, known_hosts: $kh, log: $log}')
fi
# --- end of SFTP -----------------------------------------------------------------------------------------

# --- stack.json and the printout ------------------------------------------------------------------------
jq -n --arg name "$name" --arg http "$http_listen" --arg https "$https_listen" --arg admin "$admin_url" --arg home "$home_root" \
  --argjson mail "$mail_json" --argjson dns "$dns_json" --argjson sftp "$sftp_json" \
  '{web: ({name: $name, http: $http, https: $https, caddy_admin: $admin, home_root: $home} + (if $sftp then {sftp: $sftp} else {} end))} + (if $mail then {mail: $mail} else {} end)
    + (if $dns then {dns: $dns} else {} end)' \
  >"$dir/stack.json.tmp"
mv -f -- "$dir/stack.json.tmp" "$dir/stack.json"

if ((${#php_found[@]})); then
  php_line="PHP-FPM  ${php_found[*]}: hostplane's web worker starts one master per version on demand, under $state_dir/php"
else
  php_line="PHP-FPM  none installed (no /usr/sbin/php-fpm<version>): webspaces serve files only"
fi
if [[ -n $sftp_missing ]]; then
  sftp_line="SFTP     not started: $sftp_missing"
else
  sftp_line="SFTP     127.0.0.1:$sftp_port (sshd, pid $sftp_pid, log $sftp_log; host key $host_fp, known_hosts $sftp/known_hosts):
           each package's user, chrooted into its home, with the keys of $state_dir/ssh/authorized_keys"
fi
if [[ -n $mail_missing ]]; then
  mail_lines="Mail     not started: $mail_missing"
else
  mail_lines="Mail     SMTP 127.0.0.1:$smtp_port (Postfix, pid $postfix_pid, log $mail/postfix.log), IMAP 127.0.0.1:$imap_port and
           LMTP 127.0.0.1:$lmtp_port (Dovecot, pid $dovecot_pid, log $mail/dovecot.log), doveadm HTTP API
           http://127.0.0.1:$doveadm_port (key in $mail/doveadm.key), submission 127.0.0.1:$submission_port (STARTTLS)
           and 127.0.0.1:$submissions_port (TLS; certificate $tls_dir/cert.pem), limited per mailbox and hour by the
           mail policy service on 127.0.0.1:$policy_port (pid $policy_pid, log $policy_log); they read the mail directory from
           $mail_db"
  if [[ -n $missing_tables ]]; then
    mail_lines+="
           which has no $missing_tables yet: after \`hostplane migrate\` adds them, run up.sh again"
  fi
fi
# rspamd's line.
if [[ -z $mail_missing && -z $rspamd_missing ]]; then
  mail_lines+="
  rspamd   milter 127.0.0.1:$rspamd_milter_port (Postfix's), controller http://127.0.0.1:$rspamd_controller_port (pid $rspamd_pid,
           log $rspamd_log); antispam modes from $hostplane_url/internal/rspamd-settings"
elif [[ -z $mail_missing ]]; then
  mail_lines+="
  rspamd   not started: $rspamd_missing; mail is not checked for spam"
fi
# The DNS secondary's lines, only when asked for.
dns_lines=
dns_env=
dns_use=
if [[ -n $dns_secondary && -n $knot_missing ]]; then
  dns_lines="
  Knot     not started: $knot_missing"
elif [[ -n $dns_secondary ]]; then
  dns_lines="
  Knot     DNS secondary \"$secondary_name\" on $knot_listen (pid $knot_pid, log $knot_log), transfers from
           hostplane's DNS server at $primary_host:$primary_port every zone of its catalog zone $catalog
           (TSIG key $key_name in $key_file); DNS jobs are done once it serves their change"
  if [[ -z $primary_answers ]]; then
    dns_lines+="
           hostplane's DNS server does not answer at $primary_host:$primary_port yet: start it (below); Knot asks every 10 s"
  fi
  dns_env=" DNS_LISTEN=$(printf '%q' "$hostplane_dns")"
  dns_use="
  dig @127.0.0.1 -p $knot_port <zone> SOA
      a presence domain as the secondary serves it (dig @$primary_host -p $primary_port: as hostplane does)"
fi
port_env=
if [[ -n ${PORT:-} ]]; then port_env=" PORT=$PORT"; fi
# The worker follows sshd's log for the SSH keys' last use.
sftp_env=
if [[ -z $sftp_missing ]]; then sftp_env=" WEB_SFTP_LOG=$(printf '%q' "$sftp_log")"; fi
# Where the mail part reaches the API (HOSTPLANE_URL), only when it runs.
mail_use=
if [[ -z $mail_missing ]]; then
  mail_use="
      Dovecot reports logins to it$([[ -n $rspamd_missing ]] || printf ' and rspamd asks it for the antispam modes') at $hostplane_url
      (HOSTPLANE_URL, else port PORT or 8080): npm start must listen there"
fi

# What down.sh prints to unregister the servers (mode 0600: the store's URL may hold a password).
(umask 077 && jq -n --arg d "$store_url" --arg w "$name" --arg m "$([[ -n $mail_missing ]] || printf '%s' "$name")" \
  '{database_url: $d, web_server: $w, mail_server: (if $m == "" then null else $m end)}' >"$dir/registration.json.tmp" &&
  mv -f -- "$dir/registration.json.tmp" "$dir/registration.json")
finished=1
cat <<EOF
hostplane local stack in $dir; $registration.
  Caddy    admin $admin_url, HTTP $http_listen, HTTPS $https_listen (pid $caddy_pid, log $log)
  $php_line
  $sftp_line
  $mail_lines$dns_lines
  homes    $home_root/<linux user>; details in $dir/stack.json

Use it:
  WEB_SERVER=$(printf '%q' "$name") WEB_TLS_ISSUER=internal DATABASE_URL=$(printf '%q' "$DATABASE_URL")$port_env$dns_env$sftp_env npm start
      the API (npm run build first); its worker runs the jobs of web server "$name" (Caddy config,
      PHP-FPM pools); HTTPS certificates from Caddy's own CA, as ACME cannot reach 127.0.0.1$mail_use
  curl -s -H 'Host: <fqdn>' http://$http_listen/
      a subdomain's site, as a browser would ask for it$dns_use
  $(printf '%q' "$here/down.sh") $(printf '%q' "$dir")
      stops it all (stop npm start first: its worker would start PHP-FPM again)
EOF
