// GET /mail/config-v1.1.xml at `autoconfig.<domain>` (API guide "Mail client set-up"; decision
// 0022): the settings mail clients such as Thunderbird look up for an address at a presence
// domain, from the registration of the mail server its package lives on. Outside the JSON:API
// resources: chosen by the Host header, no token, public and cacheable; 404 for any other domain.
import type { FastifyInstance } from 'fastify';
import { parseHostPort } from '../../host-port.js';

export interface MailEndpoint {
  host: string;
  port: number;
  /** Thunderbird's socketType: implicit TLS, STARTTLS, or none (the local stack). */
  socket: 'SSL' | 'STARTTLS' | 'plain';
}

export interface ClientSettings {
  imap: MailEndpoint[];
  smtp: MailEndpoint[];
}

/** Where answers may be kept: the settings change only when the operator moves a mail server. */
export const AUTOCONFIG_MAX_AGE_S = 3600;

/**
 * What a client uses, from a mail server's registration (`smtp` and `imap` host:port, the IMAP one
 * as clients reach it). IMAP on 993 or 143 is a node with TLS (`node setup`): IMAP 993 and 143
 * (STARTTLS), submission 587 (STARTTLS) and 465, the first of each the preferred one; any other
 * IMAP port is a server without TLS (the local stack): its IMAP and SMTP ports as registered. `clientSettings({ imap: 'mx1.example.net:993', smtp: 'mx1.example.net:25' })`.
 */
export function clientSettings(server: { imap: string; smtp: string }): ClientSettings {
  const imap = parseHostPort(server.imap);
  const smtp = parseHostPort(server.smtp);
  if (!imap || !smtp) throw new Error(`mail server registration without host:port (imap ${server.imap}, smtp ${server.smtp})`);
  if (imap.port === 993 || imap.port === 143) {
    return {
      imap: [{ host: imap.host, port: 993, socket: 'SSL' }, { host: imap.host, port: 143, socket: 'STARTTLS' }],
      smtp: [{ host: smtp.host, port: 587, socket: 'STARTTLS' }, { host: smtp.host, port: 465, socket: 'SSL' }],
    };
  }
  return { imap: [{ ...imap, socket: 'plain' }], smtp: [{ ...smtp, socket: 'plain' }] };
}

const xml = (s: string) => s.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);

function server(tag: 'incomingServer' | 'outgoingServer', type: 'imap' | 'smtp', e: MailEndpoint): string {
  return `    <${tag} type="${type}">
      <hostname>${xml(e.host)}</hostname>
      <port>${e.port}</port>
      <socketType>${e.socket}</socketType>
      <username>%EMAILADDRESS%</username>
      <authentication>password-cleartext</authentication>
    </${tag}>
`;
}

/**
 * Thunderbird's clientConfig 1.1 for `domain` (ACE; `display` its Unicode form): every server of
 * `settings` in order of preference, the whole address as the user name.
 */
export function autoconfigXml(domain: string, display: string, settings: ClientSettings): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<clientConfig version="1.1">
  <emailProvider id="${xml(domain)}">
    <domain>${xml(domain)}</domain>
    <displayName>${xml(display)}</displayName>
    <displayShortName>${xml(display)}</displayShortName>
${settings.imap.map((e) => server('incomingServer', 'imap', e)).join('')}${settings.smtp.map((e) => server('outgoingServer', 'smtp', e)).join('')}  </emailProvider>
</clientConfig>
`;
}

/** `autoconfig.shop.example:443` → `shop.example`; null when the host does not start with `autoconfig.`. */
export function autoconfigDomain(host: string): string | null {
  const m = /^autoconfig\.(.+?)\.?(?::[0-9]+)?$/i.exec(host.trim());
  return m ? m[1].toLowerCase() : null;
}

/** What the route asks of the e-mail service: the settings for a host `autoconfig.<domain>`, or null. */
export interface AutoconfigSource {
  autoconfigFor(host: string): Promise<{ domain: string; display: string; settings: ClientSettings } | null>;
}

export function autoconfigRoute(app: FastifyInstance, service: AutoconfigSource): void {
  // Thunderbird adds ?emailaddress=<address>; the answer names it as %EMAILADDRESS%, so it is not needed.
  app.get('/mail/config-v1.1.xml', { constraints: { host: /^autoconfig\./i }, config: { infra: true }, schema: { hide: true } }, async (request, reply) => {
    const found = await service.autoconfigFor(request.headers.host ?? '');
    if (!found) return reply.code(404).header('Cache-Control', 'no-cache').type('text/plain; charset=utf-8').send('No e-mail of this service at this domain.\n');
    return reply
      .header('Cache-Control', `public, max-age=${AUTOCONFIG_MAX_AGE_S}`)
      .type('application/xml; charset=utf-8')
      .send(autoconfigXml(found.domain, found.display, found.settings));
  });
}
