#!/usr/bin/env bash
# The local stack (issue 9 item 6; docs/decisions/0008-web-servers.md): private instances of the
# installed real components under one directory, on loopback ports, without touching /etc or the
# machine's own services — the way to try every resource on one machine, and what the tests use.
#
#   DATABASE_URL=<store> deploy/local/up.sh <dir> <port-base>
#
# Today it runs Caddy (admin API on <port-base>, HTTP on <port-base>+1, HTTPS on <port-base>+2;
# later components take <port-base>+10 and up). PHP-FPM masters are not started here: hostplane's
# web worker starts one per version on demand under <dir>/web; this script only finds the installed
# /usr/sbin/php-fpm<major.minor> binaries. It registers the stack as web server
# ${STACK_WEB_NAME:-local} in the store DATABASE_URL names (which must be migrated: `hostplane
# migrate`) through the admin CLI — `$HOSTPLANE` or, unset, `node --import tsx src/main.ts` of this
# repository — unless a server of that name is registered already, writes <dir>/stack.json and
# prints how to use it. deploy/local/down.sh <dir> stops it all.
#
# Layout: <dir>/caddy (initial.json, caddy.pid, caddy.log, Caddy's HOME and XDG data/config, so its
# storage and autosave stay here), <dir>/www (the packages' homes), <dir>/web (hostplane's PHP-FPM
# configs, pools, sockets, pid files). Refuses (exit 1) when one of the ports is taken or <dir>
# already has a running stack; exit 2 on a wrong call.
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
for tool in caddy curl jq setsid nohup; do
  command -v "$tool" >/dev/null || die "$tool is not installed (needed to run the stack)."
done

name=${STACK_WEB_NAME:-local}
admin_port=$base
http_port=$((base + 1))
https_port=$((base + 2))
here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
repo=$(cd -- "$here/../.." && pwd -P)

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

# Whether something accepts connections on 127.0.0.1:<port>.
port_taken() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# --- refuse what would clash ----------------------------------------------------------------------
pidfile_rel=caddy/caddy.pid
if [[ -f $dir_arg/$pidfile_rel ]]; then
  old=$(head -n 1 -- "$dir_arg/$pidfile_rel" 2>/dev/null || true)
  if live_as "$old" caddy; then
    die "$dir_arg already has a running stack (caddy pid $old); stop it first with $here/down.sh $dir_arg"
  fi
fi
for p in "$admin_port" "$http_port" "$https_port"; do
  if port_taken "$p"; then
    die "port $p on 127.0.0.1 is in use; the stack needs $admin_port, $http_port and $https_port: pick another port-base."
  fi
done

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
registered=
# Our own child: its pid cannot be reused before this shell is gone, so being alive is enough.
stop_caddy() {
  [[ -n $caddy_pid ]] || return 0
  if alive "$caddy_pid"; then
    kill -TERM "$caddy_pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
      alive "$caddy_pid" || break
      sleep 0.1
    done
    if alive "$caddy_pid"; then kill -KILL "$caddy_pid" 2>/dev/null || true; fi
  fi
  rm -f -- "$dir/$pidfile_rel"
  caddy_pid=
}
# Whatever goes wrong before the stack is registered, the Caddy started here does not stay behind.
on_exit() {
  local rc=$?
  if [[ -z $registered && -n $caddy_pid ]]; then
    stop_caddy
    printf '%s: stopped the Caddy it had started.\n' "$prog" >&2
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

deadline=$((SECONDS + 15))
until curl -fsS --max-time 1 -o /dev/null "http://127.0.0.1:$admin_port/config/" 2>/dev/null; do
  if ! alive "$caddy_pid"; then
    caddy_pid=
    rm -f -- "$dir/$pidfile_rel"
    printf '%s: caddy exited at start; the end of %s:\n' "$prog" "$log" >&2
    tail -n 20 -- "$log" >&2 || true
    exit 1
  fi
  ((SECONDS < deadline)) || die "caddy's admin API did not answer at http://127.0.0.1:$admin_port within 15 s (log: $log)."
  sleep 0.1
done
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
    die "web server \"$name\" is registered in this store already, but for another stack ($differs); use the same <dir> and port-base, or another name: STACK_WEB_NAME=<name> $0 ..."
  fi
  registration="web server \"$name\" was registered in this store already: not added again"
else
  "${hostplane[@]}" admin web-server add --name "$name" --caddy-admin "$admin_url" --http-listen "$http_listen" \
    --https-listen "$https_listen" --address 127.0.0.1 --home-root "$home_root" --state-dir "$state_dir" "${php_args[@]}" >/dev/null ||
    die "could not register web server \"$name\" (the CLI said why above)."
  registration="registered web server \"$name\" in this store"
fi
registered=1

# --- stack.json and the printout ------------------------------------------------------------------------
jq -n --arg name "$name" --arg http "$http_listen" --arg https "$https_listen" --arg admin "$admin_url" --arg home "$home_root" \
  '{web: {name: $name, http: $http, https: $https, caddy_admin: $admin, home_root: $home}}' >"$dir/stack.json.tmp"
mv -f -- "$dir/stack.json.tmp" "$dir/stack.json"

if ((${#php_found[@]})); then
  php_line="PHP-FPM  ${php_found[*]}: hostplane's web worker starts one master per version on demand, under $state_dir/php"
else
  php_line="PHP-FPM  none installed (no /usr/sbin/php-fpm<version>): webspaces serve files only"
fi
cat <<EOF
hostplane local stack in $dir; $registration.
  Caddy    admin $admin_url, HTTP $http_listen, HTTPS $https_listen (pid $caddy_pid, log $log)
  $php_line
  homes    $home_root/<linux user>; details in $dir/stack.json

Use it:
  WEB_SERVER=$(printf '%q' "$name") WEB_TLS_ISSUER=internal DATABASE_URL=$(printf '%q' "$DATABASE_URL") npm start
      the API (npm run build first); its worker runs the jobs of web server "$name" (Caddy config,
      PHP-FPM pools); HTTPS certificates from Caddy's own CA, as ACME cannot reach 127.0.0.1
  curl -s -H 'Host: <fqdn>' http://$http_listen/
      a subdomain's site, as a browser would ask for it
  $(printf '%q' "$here/down.sh") $(printf '%q' "$dir")
      stops it all (stop npm start first: its worker would start PHP-FPM again)
EOF
