// All SQL of the panel's logins (API guide "Panel sessions (extension)"): the contacts an e-mail
// address logs in as, sessions, and the TOTP secret and recovery codes of a contact. The
// per-request session lookup is authentication's (src/auth/auth.repository.ts).
import type { Insertable, Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { PanelSessionsTable } from '../../db/schema-panel.js';

/** Contacts one address may log in as, at most: each costs a password check. */
const MAX_CANDIDATES = 5;

export class SessionRepository {
  constructor(readonly db: Kysely<Database>) {}

  /** The contacts with this address (ignoring case) and a portal password, oldest first, with their TOTP. */
  portalContacts(email: string) {
    return this.db
      .selectFrom('contacts')
      .innerJoin('customers', 'customers.id', 'contacts.customer_id')
      .leftJoin('contact_totp', 'contact_totp.contact_id', 'contacts.id')
      .select([
        'contacts.id', 'contacts.name', 'contacts.email', 'contacts.portal_password_hash', 'customers.id as customer_id', 'customers.is_reseller',
        'customers.is_login_disabled', 'contact_totp.secret as totp_secret', 'contact_totp.enabled as totp_enabled',
      ])
      .where((eb) => eb(eb.fn('lower', ['contacts.email']), '=', email.toLowerCase()))
      .where('contacts.portal_password_hash', 'is not', null)
      .orderBy('contacts.id')
      .limit(MAX_CANDIDATES)
      .execute();
  }

  async insertSession(row: Insertable<PanelSessionsTable>): Promise<void> {
    await this.db.insertInto('panel_sessions').values(row).execute();
  }

  async deleteSession(id: number): Promise<void> {
    await this.db.deleteFrom('panel_sessions').where('id', '=', id).execute();
  }

  /** Sessions past their hard end (the hourly purge; idle ones are refused on use and go once that passes too). */
  async purgeSessions(now: string): Promise<number> {
    const r = await this.db.deleteFrom('panel_sessions').where('expires_at', '<=', now).executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  totp(contactId: number) {
    return this.db.selectFrom('contact_totp').select(['secret', 'enabled', 'last_step']).where('contact_id', '=', contactId).executeTakeFirst();
  }

  /** Stores a pending enrolment in place of an earlier pending one; false (nothing changed) when TOTP is on. */
  putPendingTotp(contactId: number, sealed: string, now: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const r = await trx.deleteFrom('contact_totp').where('contact_id', '=', contactId).where('enabled', '=', 0).executeTakeFirst();
      const on = Number(r.numDeletedRows) === 0 && (await trx.selectFrom('contact_totp').select('enabled').where('contact_id', '=', contactId).executeTakeFirst());
      if (on) return false;
      await trx.insertInto('contact_totp').values({ contact_id: contactId, secret: sealed, enabled: 0, last_step: null, created_at: now }).execute();
      return true;
    });
  }

  /**
   * Takes the code of `step` as used, once: true only for the first request that presents a code of
   * this step or a later one (concurrent requests and other instances included).
   */
  async useStep(contactId: number, enabled: 0 | 1, step: number): Promise<boolean> {
    const r = await this.db
      .updateTable('contact_totp')
      .set({ last_step: step })
      .where('contact_id', '=', contactId)
      .where('enabled', '=', enabled)
      .where((eb) => eb.or([eb('last_step', 'is', null), eb('last_step', '<', step)]))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Turns a pending enrolment on with its recovery codes (hashed); false when there was none pending. */
  enableTotp(contactId: number, codeHashes: string[]): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const r = await trx.updateTable('contact_totp').set({ enabled: 1 }).where('contact_id', '=', contactId).where('enabled', '=', 0).executeTakeFirst();
      if (Number(r.numUpdatedRows) !== 1) return false;
      await trx.deleteFrom('contact_recovery_codes').where('contact_id', '=', contactId).execute();
      await trx.insertInto('contact_recovery_codes').values(codeHashes.map((code_hash) => ({ contact_id: contactId, code_hash, used_at: null }))).execute();
      return true;
    });
  }

  unusedRecoveryCodes(contactId: number) {
    return this.db.selectFrom('contact_recovery_codes').select(['id', 'code_hash']).where('contact_id', '=', contactId).where('used_at', 'is', null).orderBy('id').execute();
  }

  /** Spends a recovery code; false when another request spent it first. */
  async spendRecoveryCode(id: number, now: string): Promise<boolean> {
    const r = await this.db.updateTable('contact_recovery_codes').set({ used_at: now }).where('id', '=', id).where('used_at', 'is', null).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Removes the contact's TOTP and recovery codes; false when it had none. */
  disableTotp(contactId: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('contact_recovery_codes').where('contact_id', '=', contactId).execute();
      const r = await trx.deleteFrom('contact_totp').where('contact_id', '=', contactId).executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    });
  }

  /** Every sealed TOTP secret (to seal again under a new first key). */
  totpSecrets() {
    return this.db.selectFrom('contact_totp').select(['contact_id', 'secret']).execute();
  }

  async updateTotpSecret(contactId: number, from: string, to: string): Promise<void> {
    await this.db.updateTable('contact_totp').set({ secret: to }).where('contact_id', '=', contactId).where('secret', '=', from).execute();
  }
}
