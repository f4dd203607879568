// Row types of DNSSEC (migrations 022, 023; docs/decisions/0032-dnssec.md): kept beside
// src/db/schema.ts, which lists them in Database.
import type { Generated } from 'kysely';

export type DnssecPhase = 'disabling' | 'rolling';
export type DnssecKeyRole = 'incoming' | 'active' | 'outgoing';

/** A domain's DNSSEC signing keys (migration 022; docs/decisions/0032-dnssec.md). */
export interface DnssecKeysTable {
  id: Generated<number>;
  domain: string;
  generation: number;
  algorithm: number;
  flags: number;
  key_tag: number;
  /** Base64 of the DNSKEY's public key field. */
  public_key: string;
  /** The PKCS#8 PEM sealed by security/secret-box.ts: never shown or logged. */
  private_key: string;
  created_at: string;
  /** Migration 023: where the key is in a rollover, and since when. */
  role: Generated<DnssecKeyRole>;
  role_at: Generated<string | null>;
}
