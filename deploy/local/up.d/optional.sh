# shellcheck shell=bash
# Sourced by deploy/local/up.sh: why each optional part (SFTP, rspamd, the Knot DNS secondary)
# cannot run here, or nothing; the ports they use. Sets up.sh's *_missing variables.
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
