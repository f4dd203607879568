# shellcheck shell=bash
# Sourced by deploy/local/up.sh: SFTP, the private sshd in a mount namespace of its own.
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
