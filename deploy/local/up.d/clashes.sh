# shellcheck shell=bash
# Sourced by deploy/local/up.sh: refuses what would clash — a stack still running in <dir>, ports
# taken by others.
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
