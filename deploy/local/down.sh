#!/usr/bin/env bash
# Stops the local stack deploy/local/up.sh started in <dir>, by PID:
#
#   deploy/local/down.sh <dir> [--purge]
#
# Every process named in a pid file of the stack — <dir>/<component>/*.pid (caddy/caddy.pid), the
# PHP-FPM masters hostplane's web worker started, <dir>/web/php/<version>/php-fpm.pid, and the
# masters of Dovecot (<dir>/mail/run/master.pid), Postfix (<dir>/mail/spool/pid/master.pid) and
# rspamd (<dir>/mail/rspamd/rspamd.pid), whose children end with them, the SFTP server (sshd,
# <dir>/sftp/sshd.pid; its mount namespace ends with it), the mail policy service
# (<dir>/mail/policy/policy.pid: node running `hostplane node mail-policy`) and Knot, the DNS secondary
# (<dir>/dns/knot.pid) — gets SIGTERM, then SIGKILL
# (with its child processes) after 10 s; only when it is alive and its /proc/<pid>/cmdline looks
# like one of the stack's programs, so a process that reused a pid is never touched. The pid files are removed; the rest of <dir> (the packages'
# files under www/, the mailboxes under mail/vmail/) stays unless --purge is given, which removes
# <dir>. Customer-writable trees (www/, web/tmp/) are never searched for pid files. Exit 0 when everything named is stopped or nothing was running,
# 1 when a process could not be stopped or the DNS secondary could not be unregistered, 2 on a wrong call.
#
# The DNS secondary (STACK_DNS_SECONDARY=knot): first its registration goes —
# `hostplane admin dns-secondary remove <name>`, with the store of <dir>/dns/registration.json, or
# DATABASE_URL when set, and the CLI of $HOSTPLANE or this repository — since a registered
# secondary that no longer answers makes every DNS job fail after DNS_SECONDARY_TIMEOUT_MS; a name
# registered for another stack meanwhile is left alone. When the store cannot be reached, down.sh
# says so, prints the command to run, and stops the rest. Then Knot (<dir>/dns/knot.pid) is stopped.
#
# The web server and mail server up.sh registered stay registered (up.sh on the same <dir> uses
# them again); when it stopped the stack, or with --purge, down.sh prints the commands that
# unregister them (<dir>/registration.json names them and the store), which a stack in another
# <dir> under the same name needs first.
#
# Stop `npm start` (WEB_SERVER=<name>) first: its web worker starts PHP-FPM again on its next job.
set -euo pipefail

prog=down.sh
usage() {
  printf 'usage: %s <dir> [--purge]\n' "$0" >&2
  exit 2
}

purge=
dir_arg=
for arg in "$@"; do
  case $arg in
    --purge) purge=1 ;;
    -*) usage ;;
    *) [[ -z $dir_arg ]] || usage; dir_arg=$arg ;;
  esac
done
[[ -n $dir_arg ]] || usage

if [[ ! -d $dir_arg ]]; then
  printf '%s: %s does not exist: nothing to stop.\n' "$prog" "$dir_arg"
  exit 0
fi
dir=$(cd -- "$dir_arg" && pwd -P)

# What a pid file of the stack may name: <dir>/*/*.pid and the PHP-FPM masters' name PROGRAMS; the
# mail servers' pid files name their own masters (Postfix's is called master).
PROGRAMS=(caddy php-fpm)

# The process's state letter (R, S, Z, …), or nothing when there is no such process.
state_of() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
  stat=${stat##*) }
  printf '%s' "${stat%% *}"
}

# Whether <pid> is alive (a zombie is gone: it only waits for its parent).
alive() {
  local s
  s=$(state_of "$1")
  [[ -n $s && $s != Z && $s != X ]]
}

# Which of the programs named after <pid> (PROGRAMS when none) <pid>'s command line is (argv[0]'s
# name, or php-fpm's title "php-fpm: master process (…)"), or nothing.
program_of() {
  local argv0='' cmd p pid=$1
  shift
  (($#)) || set -- "${PROGRAMS[@]}"
  IFS= read -r -d '' argv0 2>/dev/null <"/proc/$pid/cmdline" || true
  cmd=${argv0%% *}
  cmd=${cmd##*/}
  for p in "$@"; do
    # php-fpm8.2, php-fpm: master process (…), caddy.
    if [[ $cmd == "$p" || $cmd == "$p"[0-9]* || $cmd == "$p:"* ]]; then
      printf '%s' "$p"
      return 0
    fi
  done
}

# The pids whose parent is <pid>.
children_of() {
  local f stat rest ppid
  for f in /proc/[0-9]*/stat; do
    stat=$(cat "$f" 2>/dev/null) || continue
    rest=${stat##*) }
    read -r _ ppid _ <<<"$rest"
    if [[ $ppid == "$1" ]]; then
      f=${f#/proc/}
      printf '%s\n' "${f%/stat}"
    fi
  done
}

failed=0
stopped=0
# Stops the process of one pid file, which names one of the programs after it (PROGRAMS when
# none); removes the file.
stop_one() {
  local file=$1 pid prog_name kids programs
  shift
  programs=("$@")
  ((${#programs[@]})) || programs=("${PROGRAMS[@]}")
  pid=$(head -n 1 -- "$file" 2>/dev/null || true)
  pid=${pid//[[:space:]]/}
  if ! [[ $pid =~ ^[1-9][0-9]*$ ]] || ! alive "$pid"; then
    rm -f -- "$file"
    return 0
  fi
  prog_name=$(program_of "$pid" "${programs[@]}")
  if [[ -z $prog_name ]]; then
    printf '%s: pid %s of %s is not %s any more (left alone).\n' "$prog" "$pid" "$file" "${programs[*]}"
    rm -f -- "$file"
    return 0
  fi
  if ! kill -TERM "$pid" 2>/dev/null; then
    printf '%s: could not signal %s (pid %s of %s): not ours to stop?\n' "$prog" "$prog_name" "$pid" "$file" >&2
    failed=1
    return 0
  fi
  for _ in $(seq 1 100); do
    alive "$pid" || break
    sleep 0.1
  done
  if alive "$pid"; then
    # Killed masters leave their workers holding the sockets: they go too.
    kids=$(children_of "$pid")
    kill -KILL "$pid" 2>/dev/null || true
    for k in $kids; do
      if [[ -n $(program_of "$k" "${programs[@]}") ]]; then kill -KILL "$k" 2>/dev/null || true; fi
    done
    for _ in $(seq 1 50); do
      alive "$pid" || break
      sleep 0.1
    done
  fi
  if alive "$pid"; then
    printf '%s: %s (pid %s of %s) does not stop.\n' "$prog" "$prog_name" "$pid" "$file" >&2
    failed=1
    return 0
  fi
  [[ $prog_name != master ]] || prog_name=postfix
  [[ $prog_name != node ]] || prog_name='the mail policy service'
  printf '%s: stopped %s (pid %s).\n' "$prog" "$prog_name" "$pid"
  stopped=$((stopped + 1))
  rm -f -- "$file"
}

# --- the DNS secondary's registration ------------------------------------------------------------------
registration=$dir/dns/registration.json
if [[ -f $registration ]]; then
  sec_name=$(jq -r '.name // empty' -- "$registration" 2>/dev/null || true)
  sec_address=$(jq -r '.address // empty' -- "$registration" 2>/dev/null || true)
  sec_key=$(jq -r '.tsig_key // empty' -- "$registration" 2>/dev/null || true)
  recorded=$(jq -r '.database_url // empty' -- "$registration" 2>/dev/null || true)
  store=${DATABASE_URL:-$recorded}
  q_store=${store:+$(printf '%q' "$store")}
  q_name=${sec_name:+$(printf '%q' "$sec_name")}
  remove_cmd="DATABASE_URL=${q_store:-<store>} hostplane admin dns-secondary remove ${q_name:-<name>}"
  # Says why the registration stays, and what to run.
  not_removed() {
    local where=
    if [[ -n $recorded && $recorded != "$store" ]]; then where=" (up.sh registered it in $recorded; DATABASE_URL names another store)"; fi
    printf '%s: %s; DNS secondary "%s" stays registered%s, and every DNS job fails after DNS_SECONDARY_TIMEOUT_MS while it is. Run:\n  %s\n' \
      "$prog" "$1" "$sec_name" "$where" "$remove_cmd" >&2
    failed=1
  }
  hostplane=()
  if [[ -z $sec_name || -z $store ]]; then
    not_removed "$registration names no secondary or no store"
  elif [[ -n ${HOSTPLANE:-} ]]; then
    read -r -a hostplane <<<"$HOSTPLANE"
  else
    here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
    repo=$(cd -- "$here/../.." && pwd -P)
    if tsx=$(cd -- "$repo" && node --input-type=module -e 'console.log(import.meta.resolve("tsx"))' 2>/dev/null); then
      hostplane=(node --import "$tsx" "$repo/src/main.ts")
    else
      not_removed "tsx is not installed in $repo (run npm ci there, or set HOSTPLANE to the hostplane command)"
    fi
  fi
  if ((${#hostplane[@]})); then
    if ! listed=$(DATABASE_URL=$store "${hostplane[@]}" admin dns-secondary list --json); then
      not_removed "could not reach the store to unregister it (the CLI said why above)"
    elif ! existing=$(jq -c --arg n "$sec_name" '[.[] | select(.name == $n)][0] // empty' <<<"$listed"); then
      not_removed "the CLI's DNS secondary list is not JSON"
    elif [[ -z $existing ]]; then
      printf '%s: DNS secondary "%s" was not registered any more.\n' "$prog" "$sec_name"
      rm -f -- "$registration"
    elif [[ $(jq -r '"\(.address) \(.tsig_key)"' <<<"$existing") != "$sec_address $sec_key" ]]; then
      printf '%s: DNS secondary "%s" is registered for another stack now (%s): left alone.\n' "$prog" "$sec_name" \
        "$(jq -r '"address \(.address), TSIG key \(.tsig_key)"' <<<"$existing")"
      rm -f -- "$registration"
    elif DATABASE_URL=$store "${hostplane[@]}" admin dns-secondary remove "$sec_name" >/dev/null; then
      printf '%s: removed DNS secondary "%s" from the store.\n' "$prog" "$sec_name"
      rm -f -- "$registration"
    else
      not_removed "could not remove it (the CLI said why above)"
    fi
  fi
fi

shopt -s nullglob
for file in "$dir"/*/*.pid "$dir"/web/php/*/*.pid; do
  case $file in
    "$dir"/www/* | "$dir"/dns/* | "$dir"/sftp/*) continue ;;
    *) if [[ -f $file ]]; then stop_one "$file"; fi ;;
  esac
done
shopt -u nullglob
# The SFTP server: sshd, whose title becomes "sshd: /usr/sbin/sshd -D … [listener] …".
if [[ -f $dir/sftp/sshd.pid ]]; then stop_one "$dir/sftp/sshd.pid" sshd; fi
# The mail servers' masters: Postfix's first, so it hands nothing more to rspamd or Dovecot's LMTP.
if [[ -f $dir/mail/spool/pid/master.pid ]]; then stop_one "$dir/mail/spool/pid/master.pid" master; fi
# The mail policy service, once Postfix no longer asks it: node, and only with `node mail-policy` in its command line.
policy_pid_file=$dir/mail/policy/policy.pid
if [[ -f $policy_pid_file ]]; then
  pid=$(head -n 1 -- "$policy_pid_file" 2>/dev/null || true)
  pid=${pid//[[:space:]]/}
  if [[ $pid =~ ^[1-9][0-9]*$ ]] && alive "$pid" && [[ $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) != *" node mail-policy "* ]]; then
    printf '%s: pid %s of %s is not the mail policy service any more (left alone).\n' "$prog" "$pid" "$policy_pid_file"
    rm -f -- "$policy_pid_file"
  else
    stop_one "$policy_pid_file" node
  fi
fi
# rspamd's, named "rspamd: main process" once it runs.
if [[ -f $dir/mail/rspamd/rspamd.pid ]]; then stop_one "$dir/mail/rspamd/rspamd.pid" rspamd; fi
if [[ -f $dir/mail/run/master.pid ]]; then stop_one "$dir/mail/run/master.pid" dovecot; fi
# The DNS secondary, once it is no longer registered.
if [[ -f $dir/dns/knot.pid ]]; then stop_one "$dir/dns/knot.pid" knotd; fi

((stopped)) || printf '%s: nothing was running in %s.\n' "$prog" "$dir"

# --- the servers up.sh registered: how to unregister them ---------------------------------------------
if [[ -f $dir/registration.json ]] && ((stopped)) || [[ -n $purge && -f $dir/registration.json ]]; then
  reg_store=$(jq -r '.database_url // empty' -- "$dir/registration.json" 2>/dev/null || true)
  reg_web=$(jq -r '.web_server // empty' -- "$dir/registration.json" 2>/dev/null || true)
  reg_mail=$(jq -r '.mail_server // empty' -- "$dir/registration.json" 2>/dev/null || true)
  q_reg_store=$(printf '%q' "${reg_store:-<store>}")
  if [[ -n $reg_web ]]; then
    what="web server \"$reg_web\"${reg_mail:+ and mail server \"$reg_mail\"}"
    printf '%s: %s stay%s registered (up.sh on this <dir> uses %s again). To unregister %s (refused while a package lives there):\n' \
      "$prog" "$what" "$([[ -n $reg_mail ]] || printf 's')" "$([[ -n $reg_mail ]] && printf 'them' || printf 'it')" "$([[ -n $reg_mail ]] && printf 'them' || printf 'it')"
    printf '  DATABASE_URL=%s hostplane admin web-server remove %s\n' "$q_reg_store" "$(printf '%q' "$reg_web")"
    if [[ -n $reg_mail ]]; then printf '  DATABASE_URL=%s hostplane admin mail-server remove %s\n' "$q_reg_store" "$(printf '%q' "$reg_mail")"; fi
  fi
fi
if ((failed)); then
  exit 1
fi

if [[ -n $purge ]]; then
  # Only a stack's directory: never a directory that was given by mistake.
  if [[ ! -e $dir/stack.json && ! -d $dir/caddy ]]; then
    printf '%s: %s does not look like a stack (no stack.json, no caddy/): not purged.\n' "$prog" "$dir" >&2
    exit 1
  fi
  rm -rf -- "$dir"
  printf '%s: removed %s.\n' "$prog" "$dir"
fi
