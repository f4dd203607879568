// session and totp-enrolment (API guide "Panel sessions (extension)"): the login body, the TOTP
// bodies, and the documents. Session attributes in this order: `contact_id, customer_id, email,
// name, is_reseller, csrf_token, totp_enabled, idle_timeout_s`.
import { Type } from 'typebox';
import type { LinkBuilder, ResourceObject } from '../../jsonapi/document.js';
import { CreateBody, EXTENSION, resourceSchemas } from '../../jsonapi/schema.js';
import { csrfTokenOf } from '../../auth/panel-session.js';
import type { SessionView } from './session.service.js';

/** The demo dataset's reseller contact, with the one password our docs show (src/security/documented-passwords.ts) as its portal password. */
export const EXAMPLE_LOGIN = { email: 'rita@reseller-demo.example', password: 'Lantern7-Orbit-Fjord2' };

export const LoginBody = CreateBody(
  'session',
  Type.Object(
    {
      email: Type.String({ minLength: 1, maxLength: 254, description: "the contact's e-mail address (any letter case)" }),
      password: Type.String({ minLength: 1, maxLength: 1024, description: "the contact's portal password (set by the operator)" }),
      totp_code: Type.Optional(Type.String({ maxLength: 64, description: 'when two-factor login is on: the current 6-digit code, or an unused recovery code xxxxx-xxxxx' })),
    },
    { additionalProperties: false },
  ),
  EXAMPLE_LOGIN,
);

/** The body of the TOTP confirmation and removal: a current code (removal: or a recovery code). */
export const TotpCodeBody = (example: string) =>
  CreateBody('totp-enrolment', Type.Object({ code: Type.String({ maxLength: 64, description: '6 digits from the authenticator app' }) }, { additionalProperties: false }), { code: example });

const EXAMPLE_CSRF = 'k3M1c2VjcmV0LXRva2VuLWZvci1kb2NzLW9ubHktMDA';

export const SessionSchemas = resourceSchemas('Session', 'session', {
  attributes: Type.Object({
    contact_id: Type.String({ description: 'the contact logged in' }),
    customer_id: Type.String({ description: "the contact's customer" }),
    email: Type.String(),
    name: Type.String({ description: "the contact's name" }),
    is_reseller: Type.Boolean({ description: 'the customer is a reseller: it also sees its end customers\' objects' }),
    csrf_token: Type.String({ description: 'send it as X-CSRF-Token with every POST, PATCH, PUT and DELETE made with the session cookie' }),
    totp_enabled: Type.Boolean({ description: 'two-factor login is on' }),
    idle_timeout_s: Type.Integer({ minimum: 60, description: 'the session ends after this many seconds without a request' }),
  }),
  description: 'The customer panel\'s login (an addition to the original API); its id is always "current"',
  example: {
    type: 'session',
    id: 'current',
    attributes: {
      contact_id: '1', customer_id: '10001', email: EXAMPLE_LOGIN.email, name: 'Rita Reseller', is_reseller: true, csrf_token: EXAMPLE_CSRF, totp_enabled: false, idle_timeout_s: 1800,
    },
    links: { self: 'https://api.example.net/session' },
  },
});
Object.assign(SessionSchemas.resource, EXTENSION);

export function sessionResource(s: SessionView, links: LinkBuilder): ResourceObject {
  return {
    type: 'session',
    id: 'current',
    attributes: {
      contact_id: String(s.contactId),
      customer_id: String(s.customerId),
      email: s.email,
      name: s.name,
      is_reseller: s.isReseller,
      csrf_token: csrfTokenOf(s.cookie),
      totp_enabled: s.totpEnabled,
      idle_timeout_s: s.idleTimeoutS,
    },
    links: { self: links.to('/session') },
  };
}

export const TotpEnrolmentSchemas = resourceSchemas('TotpEnrolment', 'totp-enrolment', {
  attributes: Type.Object({
    secret: Type.Optional(Type.String({ description: 'enrolment only: the base32 secret, for typing into the app by hand; shown once' })),
    otpauth_uri: Type.Optional(Type.String({ description: 'enrolment only: the otpauth:// URI to show as a QR code; shown once' })),
    enabled: Type.Optional(Type.Boolean({ description: 'confirmation only: true' })),
    recovery_codes: Type.Optional(Type.Array(Type.String(), { description: 'confirmation only: ten codes xxxxx-xxxxx, each usable once instead of a TOTP code; shown once' })),
  }),
  description: 'Two-factor login by TOTP (RFC 6238) of the panel session\'s contact (an addition to the original API)',
  example: {
    type: 'totp-enrolment',
    id: 'current',
    attributes: { secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP', otpauth_uri: 'otpauth://totp/hostplane:rita%40reseller-demo.example?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=hostplane&algorithm=SHA1&digits=6&period=30' },
    links: { self: 'https://api.example.net/session/totp' },
  },
});
Object.assign(TotpEnrolmentSchemas.resource, EXTENSION);

export const totpEnrolmentResource = (attributes: Record<string, unknown>, links: LinkBuilder): ResourceObject => ({
  type: 'totp-enrolment',
  id: 'current',
  attributes,
  links: { self: links.to('/session/totp') },
});
