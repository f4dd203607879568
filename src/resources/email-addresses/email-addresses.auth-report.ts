// POST /internal/mail-auth-report (application passwords' `last_used_at`): Dovecot
// reports every login here after it happened (dovecot.conf auth_policy_report_after_auth; a fire-
// and-forget request that never delays or blocks a login). The mail server names itself with its
// doveadm key in `X-Hostplane-Mail-Key`; a report of a successful application-password login sets
// that password's last_used_at. Not part of the API: open like the other /internal routes (no
// token, no rate limit), hidden from the OpenAPI document; Dovecot wants `{"status":0}` back.
import type { FastifyInstance } from 'fastify';
import type { EmailAddressesService } from './email-addresses.service.js';

/** What Dovecot sends (dovecot.conf auth_policy_request_attributes), with its own success flag. */
interface AuthReport {
  login?: unknown;
  app_password_id?: unknown;
  success?: unknown;
}

export function mailAuthReportRoute(app: FastifyInstance, service: EmailAddressesService): void {
  app.post('/internal/mail-auth-report', { config: { infra: true }, schema: { hide: true } }, async (request) => {
    const key = request.headers['x-hostplane-mail-key'];
    const body = (request.body ?? {}) as AuthReport;
    if (typeof key === 'string' && body.success === true && typeof body.login === 'string' && typeof body.app_password_id === 'string' && body.app_password_id !== '') {
      await service.recordAppPasswordUse(key, body.login, body.app_password_id);
    }
    // Whatever was reported: Dovecot only logs a failure, and a report is no question.
    return { status: 0 };
  });
}
