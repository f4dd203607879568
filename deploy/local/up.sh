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
. "$here/up.d/optional.sh"

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

# ": port N on 127.0.0.1 is in use (taken since the check)" for the first of <port…> another process
# listens on now, or nothing: why a daemon that failed to start may have failed.
taken_since() {
  local p
  for p in "$@"; do
    if port_taken "$p"; then printf ': port %s on 127.0.0.1 is in use (taken since the check)' "$p"; return; fi
  done
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

. "$here/up.d/clashes.sh"

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
. "$here/up.d/stop.sh"
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


. "$here/up.d/mail.sh"

. "$here/up.d/rspamd.sh"

. "$here/up.d/knot.sh"

. "$here/up.d/sftp.sh"

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
