# shellcheck shell=bash
# Sourced by deploy/local/up.sh: the DNS secondary, Knot fed by hostplane's DNS server through its
# catalog zone. Uses and sets up.sh's variables.
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
