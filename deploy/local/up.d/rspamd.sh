# shellcheck shell=bash
# Sourced by deploy/local/up.sh: rspamd as Postfix's milter, its antispam modes from hostplane.
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
