// /session (API guide "Panel sessions (extension)"): the customer panel logs in (201 with the
// session cookie), reads and ends its session, and enrols or removes TOTP. Thin: the rules are the
// service's, the cookie and its anti-CSRF token src/auth/panel-session.ts's.
import type { FastifyRequest } from 'fastify';
import { CLEAR_SESSION_COOKIE, sessionSetCookie, sessionUnauthorized, type PanelSession } from '../../auth/panel-session.js';
import type { LinkBuilder } from '../../jsonapi/document.js';
import { resourceDocument } from '../../jsonapi/respond.js';
import { EXTENSION, addDocumentSchemas, operation } from '../../jsonapi/schema.js';
import type { TypedApp } from '../../jsonapi/typed-app.js';
import { LoginBody, SessionSchemas, TotpCodeBody, TotpEnrolmentSchemas, sessionResource, totpEnrolmentResource } from './session.schema.js';
import type { SessionService } from './session.service.js';

const SESSION_ONLY = 'the request carries no panel session cookie, or its session has ended (an Authorization header wins over the cookie)';
const CSRF = { csrf_token_invalid: 'the request was authenticated by the session cookie without the header X-CSRF-Token of the session (or with another)' };
/** The panel's own routes: the cookie only, and no answer kept for an Idempotency-Key (they hold secrets or open a session). */
const PANEL = { auth: 'session', idempotent: false } as const;

/** The panel session that authenticated the request, or the panel's 401. */
function sessionOf(request: FastifyRequest): PanelSession {
  if (!request.panelSession) throw sessionUnauthorized('This request carries no panel session; an Authorization header is answered as the token, not as a session.', false);
  return request.panelSession;
}

export function sessionRoutes(app: TypedApp, service: SessionService, links: LinkBuilder) {
  addDocumentSchemas(app, SessionSchemas.resource, SessionSchemas.document, TotpEnrolmentSchemas.resource, TotpEnrolmentSchemas.document);
  const base = { ...EXTENSION, tags: ['session'] as [string], idempotent: false as const };

  const login = operation('POST', {
    ...base,
    operationId: 'createSession',
    summary: "Log in to the customer panel with a contact's e-mail address and portal password: 201 with the session cookie",
    security: [],
    body: LoginBody,
    success: { status: 201, document: SessionSchemas.document, description: 'Logged in: Set-Cookie hostplane_session (HttpOnly, SameSite=Strict, Secure over TLS), and the session with its csrf_token' },
    errors: {
      unauthorized: 'not answered here: the login needs no credentials, its refusals are the two ids below',
      invalid_credentials: 'the address, the password or the code is wrong (one answer for each, so it tells nothing), or the contact has no portal password or its customer\'s login is disabled',
      totp_required: 'the password is right and two-factor login is on: send it again with totp_code',
    },
  });
  app.post('/session', { schema: login, config: { auth: 'none', idempotent: false } }, async (request, reply) => {
    const s = await service.login(request.body.data.attributes);
    // The audit event of a login names who logged in (src/resources/audit-events/audit-events.recorder.ts).
    request.actor = { customerId: s.customerId, isReseller: s.isReseller, contactId: s.contactId, tokenId: null };
    reply.code(201).header('set-cookie', sessionSetCookie(s.cookie, request.protocol === 'https'));
    return resourceDocument(request, links, sessionResource(s, links));
  });

  const current = operation('GET', {
    ...base,
    operationId: 'getSession',
    summary: 'The panel session of the cookie, with its csrf_token',
    success: { status: 200, document: SessionSchemas.document, description: 'The session' },
    errors: { unauthorized: SESSION_ONLY },
  });
  app.get('/session', { schema: current, config: PANEL }, async (request) => resourceDocument(request, links, sessionResource(sessionOf(request), links)));

  const logout = operation('DELETE', {
    ...base,
    operationId: 'deleteSession',
    summary: 'Log out: the session ends at once on every server (204, and the cookie is cleared)',
    success: { status: 204, description: 'Logged out' },
    errors: { unauthorized: SESSION_ONLY, ...CSRF },
  });
  app.delete('/session', { schema: logout, config: PANEL }, async (request, reply) => {
    await service.logout(sessionOf(request));
    return reply.code(204).header('set-cookie', CLEAR_SESSION_COOKIE).send();
  });

  const enrol = operation('POST', {
    ...base,
    operationId: 'enrolTotp',
    summary: 'Start two-factor login: a new TOTP secret and its otpauth URI (for a QR code), pending until confirmed',
    success: { status: 200, document: TotpEnrolmentSchemas.document, description: 'The secret, shown this once; a new POST replaces a pending one' },
    errors: { unauthorized: SESSION_ONLY, ...CSRF, totp_already_enabled: 'two-factor login is on already' },
  });
  app.post('/session/totp', { schema: enrol, config: PANEL }, async (request) =>
    resourceDocument(request, links, totpEnrolmentResource(await service.enrol(sessionOf(request)), links)),
  );

  const confirm = operation('POST', {
    ...base,
    operationId: 'confirmTotp',
    summary: 'Turn two-factor login on with a current code of the pending enrolment: 200 with ten recovery codes',
    body: TotpCodeBody('123456'),
    success: { status: 200, document: TotpEnrolmentSchemas.document, description: 'On: the recovery codes, shown this once' },
    errors: {
      unauthorized: SESSION_ONLY,
      ...CSRF,
      totp_already_enabled: 'two-factor login is on already',
      invalid_state: 'no enrolment is pending (POST /session/totp first)',
      invalid_api_data: 'the code is not the current one (`source.pointer` /data/attributes/code), or the body does not fit',
    },
  });
  app.post('/session/totp/confirm', { schema: confirm, config: PANEL }, async (request) => {
    const codes = await service.confirm(sessionOf(request), request.body.data.attributes.code);
    return resourceDocument(request, links, totpEnrolmentResource({ enabled: true, recovery_codes: codes }, links));
  });

  const disable = operation('DELETE', {
    ...base,
    operationId: 'disableTotp',
    summary: 'Turn two-factor login off with a current code or a recovery code (204)',
    body: TotpCodeBody('123456'),
    success: { status: 204, description: 'Off: the secret and the recovery codes are gone' },
    errors: {
      unauthorized: SESSION_ONLY,
      ...CSRF,
      invalid_state: 'two-factor login is not on',
      invalid_api_data: 'the code is neither the current one nor an unused recovery code (`source.pointer` /data/attributes/code), or the body does not fit',
    },
  });
  app.delete('/session/totp', { schema: disable, config: PANEL }, async (request, reply) => {
    await service.disable(sessionOf(request), request.body.data.attributes.code);
    return reply.code(204).send();
  });
}
