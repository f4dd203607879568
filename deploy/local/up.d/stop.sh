# shellcheck shell=bash
# Sourced by deploy/local/up.sh: stopping what a run started (by PID), and on_exit, which stops it
# and takes out of the store what a failed run registered. Uses up.sh's variables.
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

