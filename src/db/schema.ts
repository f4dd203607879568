// Row types of every table (Kysely's view of the store). Booleans are stored as 0/1 integers and
// timestamps as ISO-8601 UTC strings on both engines, so SQL and mapping code are dialect-free.
import type { ColumnType, Generated } from 'kysely';
import type { AuditEventsTable, IdempotencyKeysTable, WebhookDeliveriesTable, WebhookKeysTable, WebhookMessagesTable, WebhooksTable } from './schema-automation.js';
import type { ContactRecoveryCodesTable, ContactTotpTable, PanelSessionsTable } from './schema-panel.js';
import type { DnssecKeysTable, DnssecPhase } from './schema-dnssec.js';

export type { DnssecKeyRole, DnssecPhase } from './schema-dnssec.js';

export type { AuditEventsTable, IdempotencyKeysTable, WebhookDeliveriesTable, WebhookKeysTable, WebhookMessagesTable, WebhooksTable };

export type Bool = 0 | 1;

export interface CustomersTable {
  id: Generated<number>;
  reseller_id: number | null;
  is_reseller: Bool;
  organization: string | null;
  is_login_disabled: Bool;
  external_customer_id: string | null;
  legacy_password_hash: string | null;
  created_at: string;
}

export interface ContactsTable {
  id: Generated<number>;
  customer_id: number;
  name: string;
  email: string;
  phone: string | null;
  is_main: Bool;
  created_at: string;
  /**
   * The customer-portal password (scrypt; migration 008), or null: the customer-portal rule (API
   * guide "Password rules") compares mailbox passwords with it.
   */
  portal_password_hash: string | null;
}

export interface ApiTokensTable {
  id: Generated<number>;
  contact_id: number;
  token_hash: string;
  token_prefix: string;
  label: string | null;
  created_at: string;
  revoked_at: string | null;
  /** Token scopes (migration 019, docs/decisions/0028-token-scopes.md). */
  read_only: Generated<Bool>;
  /** ACE names, comma separated; null: every domain the contact sees. */
  scope_domains: string | null;
  acme_challenge: Generated<Bool>;
  expires_at: string | null;
  /** Canonical CIDRs, comma separated; null: any address. */
  allow_ips: string | null;
  last_used_at: string | null;
}

export interface PlansTable {
  id: Generated<number>;
  reseller_id: number | null;
  name: string;
  max_databases: number;
  max_email_addresses: number;
  mailbox_quota_mb: number;
  max_subdomains: number;
  webspace_mb: number;
  database_versions: string; // JSON array
  php_versions: string; // JSON array
  dns_template: string | null; // JSON; null → operator default
  /** The `p=` of the `_dmarc` base record of its domains (migration 012). */
  dmarc_policy: Generated<DmarcPolicy>;
  created_at: string;
  /** Recipients per mailbox and hour through authenticated submission (docs/decisions/0020-outbound-limits.md). */
  recipients_per_hour: Generated<number>;
  /** SSH keys a package may hold (migration 016; API guide "SSH keys"). */
  ssh_keys_per_package: Generated<number>;
}

/** What a plan's DMARC record asks receivers to do with mail that fails DMARC (RFC 7489 §6.3). */
export const DMARC_POLICIES = ['none', 'quarantine', 'reject'] as const;
export type DmarcPolicy = (typeof DMARC_POLICIES)[number];

export interface PackagesTable {
  id: Generated<number>;
  customer_id: number;
  plan_id: number;
  name: string;
  linux_user: string;
  created_at: string;
  /** The web server of its sites (migration 007); null until its first subdomain places it. */
  web_server_name: string | null;
  /** The mail server of its addresses (migration 008); null until its first address places it. */
  mail_server_name: string | null;
}

export interface DomainsTable {
  name: string; // ACE form, the id
  name_unicode: string;
  customer_id: number;
  package_id: number | null;
  is_registered: Bool;
  registration_created_at: string | null;
  registration_expires_at: string | null;
  registration_status: string | null;
  has_presence: Bool;
  dns_update_lock: Bool;
  dns_migration_mode: Bool;
  dns_serial: Generated<number>;
  created_at: string;
  /** DNSSEC (migration 022): 1 signed, 0 unsigned, null as DNS_DNSSEC says. */
  dnssec: Generated<number | null>;
  /** DNSSEC lifecycle (migration 023): null, `disabling` or `rolling`. */
  dnssec_phase: Generated<DnssecPhase | null>;
  dnssec_phase_at: Generated<string | null>;
  /** When the parent held what the CDS of the current step asks; null while awaited. */
  dnssec_parent_at: Generated<string | null>;
  /** The TTL of the DS at the parent as last seen. */
  dnssec_ds_ttl: Generated<number | null>;
}

/** A domain's DKIM keys (migration 015); the public half is the managed TXT `<selector>._domainkey` (record_id). */
export interface DkimKeysTable {
  id: Generated<number>;
  domain: string;
  selector: string;
  /** PKCS#8 PEM: a secret, only for the mail server of the domain's package (never logged or shown). */
  private_key: string;
  record_id: number | null;
  state: 'publishing' | 'signing' | 'retiring';
  /** A retiring key's record goes after this time. */
  retire_at: string | null;
  created_at: string;
}

export interface QueueJobsTable {
  id: Generated<number>;
  customer_id: number | null;
  job_type: string;
  action: string;
  object_id: string | null;
  status: string; // pending | done | failed
  error: string | null;
  payload: string | null;
  attempts: number;
  run_after: string;
  lease_owner: string | null;
  lease_until: string | null;
  from_menu: Bool;
  created_at: string;
  finished_at: string | null;
  /** Handler progress (JSON), e.g. the dns_changes id a DNS job waits for. */
  progress: string | null;
  /** `web:<server>`: only that web server's worker runs it (migration 007); null: any worker. */
  queue: Generated<string | null>;
  /** The API token whose request enqueued it (migration 019); null for the operator, the scheduler, the legacy password. */
  token_id: Generated<number | null>;
}

export interface DnsRecordsTable {
  id: Generated<number>;
  domain: string;
  name: string;
  record_type: string;
  data: string;
  ttl: number;
  tag: 'base' | 'custom' | 'managed';
  state: 'pending' | 'active' | 'deleting';
  created_at: string;
  updated_at: string;
  /** The subdomain whose base records these are (migration 007), else null. */
  subdomain_id: number | null;
}

export interface DnsChangesTable {
  id: Generated<number>;
  domain: string;
  created_at: string;
  /** The zone's SOA serial after the change (migration 010); null when the domain row is gone. */
  serial: ColumnType<number | null, number | null | undefined, number | null>;
  /** The owners the change touched, a JSON array of relative names (migration 011); null: the whole zone. */
  owners: ColumnType<string | null, string | null | undefined, string | null>;
}

/** A secondary name server fed by zone transfers (migration 010; docs/decisions/0013-dns-secondaries.md). */
export interface DnsSecondariesTable {
  id: Generated<number>;
  name: string;
  /** host:port: NOTIFY and SOA checks go there; transfers are accepted from its host only. */
  address: string;
  tsig_key_name: string;
  tsig_algorithm: string;
  /** base64 TSIG secret: never shown or logged. */
  tsig_secret: string;
  created_at: string;
}

export interface DnsServersTable {
  id: string;
  applied_change_id: number;
  heartbeat_at: string;
  started_at: string;
}

/** A registered MariaDB/MySQL server (operator data, migration 005). */
export interface DatabaseServersTable {
  id: Generated<number>;
  name: string;
  db_type: 'mariadb' | 'mysql';
  version: string; // major.minor, e.g. 10.11
  /** mysql://admin:password@host:port — the admin credentials: never shown or logged. */
  url: string;
  access_hosts: string; // JSON array of MySQL host patterns, e.g. ["%"]
  is_default: Bool;
  is_dedicated: Bool;
  created_at: string;
}

/** A customer's database on a registered server (migration 005); `name` is its user name too. */
export interface DatabasesTable {
  id: Generated<number>;
  customer_id: number;
  package_id: number;
  server_name: string;
  db_type: 'mariadb' | 'mysql';
  version: string;
  name: string;
  description: Generated<string>;
  usage_bytes: number | null;
  usage_updated_at: string | null;
  state: 'pending' | 'live' | 'deleting';
  created_at: string;
}

export interface WebServersTable {
  id: Generated<number>;
  name: string;
  caddy_admin: string;
  http_listen: string;
  https_listen: string | null;
  addresses: string; // JSON array of IPs
  home_root: string;
  state_dir: string;
  php: string; // JSON object version → php-fpm binary
  /** Group of the PHP-FPM sockets (Caddy's group when it runs as another user than the worker), or null. */
  socket_group: string | null;
  is_default: Bool;
  created_at: string;
  /** The host customers connect to for SFTP (migration 016); null: the first of `addresses`. */
  sftp_host: string | null;
  /** The port of sshd's SFTP service there (migration 016) [22]. */
  sftp_port: Generated<number>;
}

/** A package's SSH public key (migration 016; API guide "SSH keys"): what sshd reads on its web server. */
export interface SshKeysTable {
  id: Generated<number>;
  customer_id: number;
  package_id: number;
  /** `<algorithm> <base64> [comment]`, one line, checked (src/resources/ssh-keys/ssh-keys.rules.ts). */
  public_key: string;
  algorithm: string;
  /** `SHA256:<unpadded base64>` as `ssh-keygen -l` prints it; unique per package. */
  fingerprint: string;
  description: Generated<string>;
  state: 'pending' | 'live' | 'deleting';
  created_at: string;
  /** When sshd last accepted it (SshKeysService.recordUse), or null. */
  last_used_at: string | null;
}

export interface SubdomainsTable {
  id: Generated<number>;
  customer_id: number;
  package_id: number;
  domain: string; // ACE of the parent domain
  name: string; // the label(s), ACE
  kind: 'webspace' | 'redirect' | 'email';
  description: string;
  webspace_path: string | null;
  php_version: string | null;
  webspace_https: Bool;
  /** The webspace directory as its job checked it (realpath inside the home); only this is served. */
  webspace_root: string | null;
  redirect_target: string | null; // null on a redirect: uninitialized
  redirect_dynamic: Bool;
  redirect_https: Bool;
  state: 'pending' | 'live' | 'deleting';
  created_at: string;
  updated_at: string;
}

/** When the next job of each scheduled job definition is due (src/queue/queue.repository.ts scheduleDue). */
export interface QueueSchedulesTable {
  name: string;
  next_run_at: string;
}

export interface MailServersTable {
  id: Generated<number>;
  name: string;
  doveadm_url: string;
  /** The doveadm HTTP API key: a secret, never shown or logged. */
  doveadm_key: string;
  smtp: string; // host:port
  imap: string; // host:port
  is_default: Bool;
  created_at: string;
}

export interface EmailAddressesTable {
  id: Generated<number>;
  customer_id: number;
  package_id: number;
  mail_server_name: string;
  /** ACE domain, local part lower-cased: the key of the mail directory. */
  address: string;
  /** The domain part (ACE): a presence domain or a subdomain of one. */
  domain: string;
  /** The presence domain (ACE) it belongs to: `domain` itself, or the parent of a subdomain (relationships.domain). */
  zone: string;
  kind: 'mailbox' | 'forward';
  description: string | null;
  antispam: 'reject' | 'junk-folder' | 'subject-rewrite' | 'none';
  forward_to: string; // JSON array of addresses
  autoresponder_text: string;
  autoresponder_active: Bool;
  autoresponder_activates: string | null; // YYYY-MM-DD
  autoresponder_expires: string | null;
  quota_bytes: number | null; // null for forwards
  used_bytes: number | null;
  usage_updated_at: string | null;
  state: 'pending' | 'live' | 'deleting';
  created_at: string;
  updated_at: string;
}

export interface MailDomainsTable {
  domain: string;
  /** The mail server serving it (each server reads only its own rows). */
  server: string;
}

export interface MailUsersTable {
  address: string;
  domain: string;
  password_hash: string; // {BLF-CRYPT}$2b$…
  quota_bytes: number;
  active: Bool;
  server: string;
  /** Its plan's recipients_per_hour, kept equal in the transaction of every change (migration 014). */
  recipients_per_hour: Generated<number>;
}

export interface MailAppPasswordsTable {
  id: Generated<number>;
  address: string;
  secret_sha256: string; // lower-case hex
  device: string;
  application: string;
  created_at: string;
  last_used_at: string | null;
}

export interface MailAliasesTable {
  source: string;
  destination: string;
  server: string;
}

/** A mailbox's Sieve script (migration 009): `name` is always 'active'; `id` the SHA-256 of `script`. */
export interface MailSieveTable {
  address: string;
  name: string;
  id: string;
  script: string;
  server: string;
}

/** A map a mail server polls (migration 013): its version and Last-Modified, the server's last request. */
export interface MailMapVersionsTable {
  server: string;
  map: string;
  epoch: string;
  version: number;
  /** Unix seconds: the map's Last-Modified, one more at least with every version. */
  modified_s: number;
  fetched_at: string | null;
}

/** When a mail server first held a version of a map (migration 013). */
export interface MailMapHoldsTable {
  server: string;
  map: string;
  version: number;
  held_at: string;
}

export interface Database {
  customers: CustomersTable;
  contacts: ContactsTable;
  api_tokens: ApiTokensTable;
  plans: PlansTable;
  dkim_keys: DkimKeysTable;
  dnssec_keys: DnssecKeysTable;
  packages: PackagesTable;
  domains: DomainsTable;
  queue_jobs: QueueJobsTable;
  dns_records: DnsRecordsTable;
  dns_changes: DnsChangesTable;
  dns_servers: DnsServersTable;
  dns_secondaries: DnsSecondariesTable;
  database_servers: DatabaseServersTable;
  databases: DatabasesTable;
  queue_schedules: QueueSchedulesTable;
  web_servers: WebServersTable;
  subdomains: SubdomainsTable;
  mail_servers: MailServersTable;
  email_addresses: EmailAddressesTable;
  mail_domains: MailDomainsTable;
  mail_users: MailUsersTable;
  mail_app_passwords: MailAppPasswordsTable;
  mail_aliases: MailAliasesTable;
  mail_map_versions: MailMapVersionsTable;
  mail_map_holds: MailMapHoldsTable;
  mail_sieve: MailSieveTable;
  ssh_keys: SshKeysTable;
  webhooks: WebhooksTable;
  webhook_messages: WebhookMessagesTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_keys: WebhookKeysTable;
  idempotency_keys: IdempotencyKeysTable;
  audit_events: AuditEventsTable;
  panel_sessions: PanelSessionsTable;
  contact_totp: ContactTotpTable;
  contact_recovery_codes: ContactRecoveryCodesTable;
}
