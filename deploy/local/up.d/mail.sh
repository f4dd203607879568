# shellcheck shell=bash
# Sourced by deploy/local/up.sh: Dovecot and Postfix on the store's mail directory, and the mail
# server's registration. Uses and sets up.sh's variables.
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
    die "dovecot did not start$(taken_since "$imap_port" "$lmtp_port" "$doveadm_port"); the end of $mail/dovecot.log:
$(tail -n 20 -- "$mail/dovecot.log")"
  # Postfix's master logs through its own log service, which is not up when the master fails to
  # start: its reason is lost, so a port taken since the check above is named here.
  postfix -c "$mail/postfix" start </dev/null >>"$mail/postfix.log" 2>&1 ||
    die "postfix did not start$(taken_since "$smtp_port" "$submission_port" "$submissions_port"); the end of $mail/postfix.log:
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
