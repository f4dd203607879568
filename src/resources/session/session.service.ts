// The panel's logins (API guide "Panel sessions (extension)"; docs/decisions/0030-panel-sessions.md):
// a contact's e-mail address and portal password, then its TOTP code or a recovery code when it has
// two-factor login on; the session a login opens; enrolling and removing TOTP. Used by the routes
// and by `hostplane admin contact disable-totp` / `admin webhook reseal`.
import crypto from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Config } from '../../config.js';
import type { Store } from '../../db/index.js';
import { nowIso } from '../../db/time.js';
import { AppError, invalidField } from '../../errors.js';
import { hashLegacyPassword, verifyLegacyPassword } from '../../auth/legacy-password.js';
import { PANEL_CHALLENGE, newSessionCookie, sessionHash, type PanelSession } from '../../auth/panel-session.js';
import { secretBox, storeSealingKey, type SecretBox } from '../../security/secret-box.js';
import { SessionRepository } from './session.repository.js';
import { matchingStep, newRecoveryCodes, newTotpSecret, otpauthUri, recoveryCodeOf } from './session.totp.js';

export interface LoginInput {
  email: string;
  password: string;
  totp_code?: string;
}

/** A session as its document shows it (PanelSession without the row id). */
export type SessionView = Omit<PanelSession, 'id'>;

/** Every refused login waits this long more: guessing is slowed beyond the error blocking of the client. */
export const FAILED_LOGIN_PAUSE_MS = 200;

const refused = async () => {
  await sleep(FAILED_LOGIN_PAUSE_MS);
  return new AppError('invalid_credentials', 'Wrong e-mail address, password or code.', undefined, PANEL_CHALLENGE);
};
const wrongCode = () => invalidField('code', 'This is not the current code of your authenticator app (or an unused recovery code).');

export class SessionService {
  private readonly repo: SessionRepository;
  // Compared against when no contact has the address, so the answer takes as long either way.
  private readonly dummyHash = hashLegacyPassword(crypto.randomBytes(18).toString('base64'));
  private box: Promise<SecretBox> | null = null;

  constructor(private readonly deps: { store: Store; config: Config }) {
    this.repo = new SessionRepository(deps.store.db);
  }

  /**
   * Checks the credentials and opens a session: the cookie value (shown once, stored hashed) and
   * the session. 401 `invalid_credentials` alike for an unknown address, a wrong password, a contact
   * without portal password, a disabled login or a wrong code; 401 `totp_required` when only the code is missing.
   */
  async login(input: LoginInput): Promise<SessionView & { contactId: number }> {
    const candidates = await this.repo.portalContacts(input.email.trim());
    let contact: (typeof candidates)[number] | undefined;
    for (const c of candidates) {
      if (await verifyLegacyPassword(input.password, c.portal_password_hash!)) {
        contact = c;
        break;
      }
    }
    if (!candidates.length) await verifyLegacyPassword(input.password, await this.dummyHash);
    if (!contact || contact.is_login_disabled === 1) throw await refused();
    const totpEnabled = contact.totp_enabled === 1;
    if (totpEnabled) {
      const code = input.totp_code?.trim() ?? '';
      if (code === '') {
        throw new AppError('totp_required', 'Two-factor login is on: send the code of your authenticator app (or a recovery code) as totp_code.', undefined, PANEL_CHALLENGE);
      }
      if (!(await this.secondFactor(contact.id, contact.totp_secret!, code))) throw await refused();
    }
    const cookie = newSessionCookie();
    const now = Date.now();
    const { idleS, maxS } = this.deps.config.panel;
    await this.repo.insertSession({
      session_hash: sessionHash(cookie), contact_id: contact.id, created_at: new Date(now).toISOString(), last_used_at: new Date(now).toISOString(),
      expires_at: new Date(now + maxS * 1000).toISOString(), idle_timeout_s: idleS,
    });
    return {
      cookie, contactId: contact.id, customerId: contact.customer_id, isReseller: contact.is_reseller === 1, name: contact.name, email: contact.email, totpEnabled, idleTimeoutS: idleS,
    };
  }

  logout(session: PanelSession): Promise<void> {
    return this.repo.deleteSession(session.id);
  }

  /** A new pending enrolment (replacing a pending one): the secret and its otpauth URI, shown this once. 409 when TOTP is on. */
  async enrol(session: PanelSession): Promise<{ secret: string; otpauth_uri: string }> {
    const secret = newTotpSecret();
    if (!(await this.repo.putPendingTotp(session.contactId, (await this.sealing()).seal(secret), nowIso()))) throw alreadyEnabled();
    return { secret, otpauth_uri: otpauthUri(session.email, secret) };
  }

  /** Turns the pending enrolment on with a current code; the ten recovery codes, shown this once. */
  async confirm(session: PanelSession, code: string): Promise<string[]> {
    const totp = await this.repo.totp(session.contactId);
    if (!totp) throw new AppError('invalid_state', 'No enrolment is pending: start one with POST /session/totp.');
    if (totp.enabled === 1) throw alreadyEnabled();
    const step = matchingStep((await this.sealing()).open(totp.secret), code.trim(), Date.now());
    if (step === null || !(await this.repo.useStep(session.contactId, 0, step))) throw wrongCode();
    const codes = newRecoveryCodes();
    if (!(await this.repo.enableTotp(session.contactId, await Promise.all(codes.map((c) => hashLegacyPassword(c)))))) throw alreadyEnabled();
    return codes;
  }

  /** Turns TOTP off with a current code or a recovery code (422 otherwise). */
  async disable(session: PanelSession, code: string): Promise<void> {
    const totp = await this.repo.totp(session.contactId);
    if (!totp || totp.enabled !== 1) throw new AppError('invalid_state', 'Two-factor login is not on.');
    if (!(await this.secondFactor(session.contactId, totp.secret, code.trim()))) throw wrongCode();
    await this.repo.disableTotp(session.contactId);
  }

  /** The operator's way back in for a customer who lost the device (`admin contact disable-totp`); false when it was off. */
  disableTotpOf(contactId: number): Promise<boolean> {
    return this.repo.disableTotp(contactId);
  }

  /** Seals every TOTP secret again with the first key of WEBHOOK_SECRET_KEY (`admin webhook reseal`); how many changed. */
  async reseal(): Promise<number> {
    const box = await this.sealing();
    let n = 0;
    for (const t of await this.repo.totpSecrets()) {
      const again = box.reseal(t.secret);
      if (again === null) continue;
      await this.repo.updateTotpSecret(t.contact_id, t.secret, again);
      n++;
    }
    return n;
  }

  /** A current TOTP code not used before, or an unused recovery code (spent now). */
  private async secondFactor(contactId: number, sealed: string, code: string): Promise<boolean> {
    if (/^[0-9]{6}$/.test(code)) {
      const step = matchingStep((await this.sealing()).open(sealed), code, Date.now());
      return step !== null && this.repo.useStep(contactId, 1, step);
    }
    const recovery = recoveryCodeOf(code);
    if (recovery === null) return false;
    const unused = await this.repo.unusedRecoveryCodes(contactId);
    const matches = await Promise.all(unused.map((r) => verifyLegacyPassword(recovery, r.code_hash)));
    const hit = unused.find((_, i) => matches[i]);
    return hit !== undefined && this.repo.spendRecoveryCode(hit.id, nowIso());
  }

  private sealing(): Promise<SecretBox> {
    // The store's key never changes once made; a failed read is tried again next time.
    this.box ??= storeSealingKey(this.deps.store.db).then(
      (key) => secretBox(this.deps.config.webhooks.secretKeys, key),
      (err: unknown) => {
        this.box = null;
        throw err;
      },
    );
    return this.box;
  }
}

const alreadyEnabled = () => new AppError('totp_already_enabled', 'Two-factor login is on already; turn it off first (DELETE /session/totp) to enrol another device.');
