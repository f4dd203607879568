// A domain as the panel reads it (API guide "Domains"): several pages list or show domains.
export interface DomainAttributes {
  name: string;
  name_ace: string;
  registration: { created_at: string; expires_at: string; status: string } | null;
  presence: {
    dns_update_lock: boolean;
    dns_migration_mode: { enabled: boolean };
    /** An extension (API guide "DNSSEC (extension)"). */
    dnssec?: { enabled: boolean; state: 'unsigned' | 'signed' | 'rolling' | 'disabling'; ds_records: string[]; dnskeys: string[] };
  } | null;
}
