// Row types of the customer panel's logins (migration 021; API guide "Panel sessions (extension)"):
// kept beside src/db/schema.ts, which lists them in Database.
import type { Generated } from 'kysely';

/** A logged-in browser: only the cookie's SHA-256 is kept (docs/decisions/0030-panel-sessions.md). */
export interface PanelSessionsTable {
  id: Generated<number>;
  session_hash: string;
  contact_id: number;
  created_at: string;
  /** Noted at most once a minute: the idle limit counts from it. */
  last_used_at: string;
  /** The hard end: login + PANEL_SESSION_MAX_S as it was then. */
  expires_at: string;
  /** PANEL_SESSION_IDLE_S as it was at login. */
  idle_timeout_s: number;
}

/** A contact's TOTP (RFC 6238): the secret sealed (never shown again after enrolment). */
export interface ContactTotpTable {
  contact_id: number;
  secret: string;
  /** 0 while the enrolment waits for its first code. */
  enabled: 0 | 1;
  /** The time step of the last code accepted; a code of that step or an earlier one is refused. */
  last_step: number | null;
  created_at: string;
}

/** One recovery code of an enabled TOTP, scrypt-hashed; each works once. */
export interface ContactRecoveryCodesTable {
  id: Generated<number>;
  contact_id: number;
  code_hash: string;
  used_at: string | null;
}
