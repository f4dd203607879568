// Operator actions on customers, contacts, API tokens and their passwords (`hostplane admin
// customer|contact|token|reseller …`, the demo loader, test factories).
import { AppError } from '../errors.js';
import { found, invalid } from './operator-errors.js';
import { nowIso } from '../db/time.js';
import { generateToken, hashToken, tokenPrefix } from '../auth/tokens.js';
import { hashLegacyPassword } from '../auth/legacy-password.js';
import { isEmailAddress } from '../email-address.js';
import { randomAlnum } from '../security/password-generator.js';
import { AdminRepository } from './admin.repository.js';
import { storedScope, type TokenScopeOptions } from './token-options.js';

export interface NewCustomer {
  organization?: string | null;
  reseller?: boolean;
  resellerId?: number | null;
  contact: { name: string; email: string; phone?: string | null };
}

/** The contact rules of the customer menu: a name and an address that can receive mail. */
function checkContact(c: { name: string; email: string }) {
  if (!c.name.trim()) throw invalid('A contact needs a name.');
  if (!isEmailAddress(c.email)) throw invalid(`"${c.email}" is not an e-mail address; write it as name@example.com.`);
}

/** A random legacy password: 24 base62 characters (~143 bits). */
export const generateLegacyPassword = (length = 24): string => randomAlnum(length);

export class CustomersAdminService {
  constructor(private readonly repo: AdminRepository) {}

  /** Creates a customer with its main contact; returns both ids. */
  async createCustomer(c: NewCustomer) {
    checkContact(c.contact);
    if (c.resellerId != null) await this.reseller(c.resellerId);
    return this.repo.db.transaction().execute(async (trx) => {
      const repo = new AdminRepository(trx);
      const { id } = await repo.insertCustomer({
        reseller_id: c.resellerId ?? null,
        is_reseller: c.reseller ? 1 : 0,
        organization: c.organization ?? null,
        is_login_disabled: 0,
        external_customer_id: null,
        legacy_password_hash: null,
        created_at: nowIso(),
      });
      const contact = await repo.insertContact({
        customer_id: id,
        name: c.contact.name,
        email: c.contact.email,
        phone: c.contact.phone ?? null,
        is_main: 1,
        created_at: nowIso(),
      });
      return { customerId: id, contactId: contact.id };
    });
  }

  async createContact(customerId: number, c: { name: string; email: string; phone?: string | null }) {
    checkContact(c);
    found(await this.repo.customer(customerId), `customer ${customerId}`);
    const { id } = await this.repo.insertContact({ customer_id: customerId, name: c.name, email: c.email, phone: c.phone ?? null, is_main: 0, created_at: nowIso() });
    return { contactId: id };
  }

  async deleteContact(contactId: number) {
    const contact = await this.repo.contact(contactId);
    if (!contact) throw new AppError('resource_not_found', `No contact ${contactId}.`);
    if (contact.is_main) throw new AppError('invalid_state', 'The main contact of a customer cannot be deleted.');
    await this.repo.deleteContact(contactId);
  }

  /**
   * Issues a token for a contact (API guide "Authentication"), limited as `scope` says (API guide
   * "Scoped tokens"); the token is returned once and stored only as a hash.
   */
  async issueToken(contactId: number, label: string | null = null, scope: TokenScopeOptions = {}) {
    const contact = found(await this.repo.contact(contactId), `contact ${contactId}`);
    const customer = found(await this.repo.customer(contact.customer_id), `customer ${contact.customer_id}`);
    const owner = { customerId: customer.id, isReseller: customer.is_reseller === 1 };
    const limits = await storedScope(scope, (ace) => this.repo.domainVisibleTo(owner, ace), new Date());
    const token = generateToken();
    const { id } = await this.repo.insertToken({
      contact_id: contactId, token_hash: hashToken(token), token_prefix: tokenPrefix(token), label, created_at: nowIso(), revoked_at: null, ...limits,
    });
    return { tokenId: id, token };
  }

  listTokens(contactId?: number) {
    return this.repo.tokens(contactId);
  }

  async revokeToken(tokenId: number) {
    const r = await this.repo.revokeToken(tokenId, nowIso());
    if (Number(r.numUpdatedRows) === 0) throw new AppError('resource_not_found', `No active token ${tokenId}.`);
  }

  /** Sets a freshly generated legacy password and returns it; it is shown once, only its hash is kept. */
  async setGeneratedLegacyPassword(customerId: number): Promise<string> {
    const password = generateLegacyPassword();
    await this.setLegacyPassword(customerId, password);
    return password;
  }

  listCustomers() {
    return this.repo.customersWithMainContact();
  }

  async customer(customerId: number) {
    const [c] = await this.repo.customersWithMainContact(customerId);
    if (!c) throw new AppError('resource_not_found', `No customer ${customerId}.`);
    return c;
  }

  async listContacts(customerId?: number) {
    if (customerId !== undefined && !(await this.repo.customer(customerId))) throw new AppError('resource_not_found', `No customer ${customerId}.`);
    return this.repo.contacts(customerId);
  }

  /** The customer `customerId`, which must be a reseller. */
  async reseller(customerId: number) {
    const c = await this.repo.customer(customerId);
    if (!c) throw new AppError('resource_not_found', `No customer ${customerId}.`);
    if (!c.is_reseller) throw invalid(`Customer ${customerId} is not a reseller.`);
    return c;
  }

  async contact(contactId: number) {
    return found(await this.repo.contact(contactId), `contact ${contactId}`);
  }

  async token(tokenId: number) {
    return found(await this.repo.token(tokenId), `token ${tokenId}`);
  }

  /**
   * The contact's customer-portal password (its e-mail address is the portal user name), stored as
   * a slow hash; null removes it. A mailbox with that address may not use it (API guide "E-mail
   * addresses", "Password rules").
   */
  async setPortalPassword(contactId: number, password: string | null) {
    found(await this.repo.contact(contactId), `contact ${contactId}`);
    if (password !== null && password.length < 12) throw invalid('A portal password needs at least 12 characters.');
    await this.repo.setPortalPassword(contactId, password === null ? null : await hashLegacyPassword(password));
  }

  async setLegacyPassword(customerId: number, password: string | null) {
    const c = await this.repo.customer(customerId);
    if (!c) throw new AppError('resource_not_found', `No customer ${customerId}.`);
    if (!c.is_reseller) throw invalid('Only resellers have a legacy API password.');
    if (password !== null && password.length < 12) throw invalid('A legacy password needs at least 12 characters.');
    await this.repo.setLegacyPassword(customerId, password === null ? null : await hashLegacyPassword(password));
  }

  /** true while the database has no customer: the demo dataset may be loaded. */
  isEmpty() {
    return this.repo.isEmpty();
  }
}
