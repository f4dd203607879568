// email-address and application-password (API guide "E-mail addresses"): request bodies
// and the wire representation.
//
// Attribute order is fixed by the API guide "E-mail addresses": `address, address_ace,
// address_type, description, antispam, forward_to, autoresponder, quota, created_at`, then
// `password` only in the answers that generated one. `autoresponder` and `quota` are null for
// forwards.
import { Type } from 'typebox';
import { ref, type LinkBuilder, type ResourceObject } from '../../jsonapi/document.js';
import { CreateBody, Nullable, StringEnum, Timestamp, ToOne, UpdateBody, idParam, resourceSchemas } from '../../jsonapi/schema.js';
import type { EmailAddressRow } from './email-addresses.repository.js';
import type { AppPasswordRow } from './email-addresses.mail-directory.repository.js';
import { ADDRESS_TYPES, ANTISPAM_MODES, unicodeAddress } from './email-addresses.rules.js';

export const EMAIL_FILTERS = ['package_id', 'address', 'domain'] as const;

const Description = Type.String({ maxLength: 255, description: 'free text for your own use' });
const Password = Type.String({ maxLength: 1024, description: 'at least 16 characters by the password rules; left out: one is generated and returned' });

// Values are judged by the service (422 naming what is possible); the schema fixes the shape. The
// examples name the demo dataset's shop domain.
export const EmailCreateBody = CreateBody(
  'email-address',
  Type.Object(
    {
      address: Type.String({ maxLength: 1024, description: 'local@domain at one of your presence domains or their subdomains', examples: ['info@shop-demo.example'] }),
      address_type: Type.String({ description: 'mailbox or forward', examples: ['mailbox'] }),
      description: Type.Optional(Nullable(Description)),
      antispam: Type.Optional(Type.String({ description: 'reject (default), junk-folder (mailboxes), subject-rewrite or none' })),
      forward_to: Type.Optional(Nullable(Type.Array(Type.String({ maxLength: 1024 }), { description: 'required for a forward; optional for a mailbox, which keeps a copy' }))),
      password: Type.Optional(Password),
    },
    { additionalProperties: false },
  ),
  { address: 'info@shop-demo.example', address_type: 'mailbox', description: 'shop enquiries' },
);

export const EmailUpdateBody = UpdateBody(
  'email-address',
  Type.Object(
    {
      password: Type.Optional(Password),
      description: Type.Optional(Nullable(Description)),
      antispam: Type.Optional(Type.String({ description: 'reject, junk-folder (mailboxes), subject-rewrite or none' })),
      autoresponder: Type.Optional(Type.Unknown({ description: 'exactly one of text, active, activates (YYYY-MM-DD or null), expires per request' })),
      // Accepted by the schema so that the answer can say why they cannot change.
      address: Type.Optional(Type.Unknown({ description: 'cannot be changed' })),
      address_type: Type.Optional(Type.Unknown({ description: 'cannot be changed' })),
      forward_to: Type.Optional(Type.Unknown({ description: 'changes through POST/DELETE /email-addresses/{id}/forward-to/{address}' })),
    },
    { additionalProperties: false },
  ),
  { id: '1', attributes: { autoresponder: { text: 'Thank you for your message. We answer within one working day.' } } },
);

export const AppPasswordCreateBody = CreateBody(
  'application-password',
  Type.Object(
    {
      device: Type.String({ maxLength: 1024, description: 'free text, non-empty, e.g. the device the password is for', examples: ['Laptop'] }),
      application: Type.String({ maxLength: 1024, description: 'free text, non-empty, e.g. the mail program', examples: ['Thunderbird'] }),
    },
    { additionalProperties: false },
  ),
  { device: 'Laptop', application: 'Thunderbird' },
);

/** The example is the first address of a new store (the POST example creates it). */
export const EmailIdParam = idParam('1');
export const ForwardTargetParams = Type.Object({
  id: Type.String({ examples: ['1'] }),
  target: Type.String({ description: 'the address to forward to; percent-encoding allowed, `+` is literal', examples: ['orders+shop@shop-demo.example'] }),
});
export const AppPasswordParams = Type.Object({ id: Type.String({ examples: ['1'] }), appId: Type.String({ examples: ['1'] }) });

const Autoresponder = Type.Object({
  text: Type.String(),
  active: Type.Boolean(),
  activates: Nullable(Type.String({ format: 'date' }), 'switches it on at 00:00 German time of that date; null: no scheduled start'),
  expires: Nullable(Type.String({ format: 'date' }), 'switches it off at 00:00 German time of that date; null: no scheduled end'),
});
const Quota = Type.Object({
  limit_bytes: Type.Integer({ description: "the plan's mailbox_quota_mb in bytes" }),
  used_bytes: Nullable(Type.Integer(), 'null until the first measurement (refreshed daily)'),
  updated_at: Nullable(Timestamp('when used_bytes was measured')),
});

/** What emailAddressResource emits (OpenAPI components EmailAddress, EmailAddressDocument, EmailAddressList). */
export const EmailAddressSchemas = resourceSchemas('EmailAddress', 'email-address', {
  attributes: Type.Object({
    address: Type.String({ description: 'the full address, the domain in Unicode' }),
    address_ace: Type.String({ description: 'the same with the domain in ACE (punycode) form' }),
    address_type: StringEnum([...ADDRESS_TYPES]),
    description: Nullable(Type.String()),
    antispam: StringEnum([...ANTISPAM_MODES]),
    forward_to: Type.Array(Type.String(), { description: 'where mail is forwarded to; a mailbox with targets keeps a copy' }),
    autoresponder: Nullable(Autoresponder, 'mailboxes only; null for forwards'),
    quota: Nullable(Quota, 'mailboxes only; null for forwards'),
    created_at: Timestamp(),
    password: Type.Optional(Type.String({ description: 'only in the answers that generated it (POST without password, POST …/password); shown once' })),
  }),
  relationships: Type.Object({
    package: ToOne('package'),
    domain: ToOne('domain', { description: 'the presence domain the address is at (or whose subdomain it is at)' }),
    'application-passwords': Type.Optional(Type.Object({ links: Type.Object({ related: Type.String() }) }, { description: 'mailboxes only' })),
  }),
  links: Type.Object({
    self: Type.String({ description: 'URL of this object' }),
    'queue-job': Type.Optional(Type.String({ description: 'in the 202 answers: URL of the job that applies the change' })),
  }),
  example: {
    type: 'email-address',
    id: '1',
    attributes: {
      address: 'info@shop-demo.example',
      address_ace: 'info@shop-demo.example',
      address_type: 'mailbox',
      description: 'shop enquiries',
      antispam: 'reject',
      forward_to: [],
      autoresponder: { text: '', active: false, activates: null, expires: null },
      quota: { limit_bytes: 2147483648, used_bytes: 524288, updated_at: '2026-11-23T03:00:00.000Z' },
      created_at: '2026-11-22T03:51:28.685Z',
    },
    relationships: {
      package: { data: { type: 'package', id: '2' } },
      domain: { data: { type: 'domain', id: 'shop-demo.example' } },
      'application-passwords': { links: { related: 'https://api.example.net/email-addresses/1/application-passwords' } },
    },
    links: { self: 'https://api.example.net/email-addresses/1' },
  },
});

/** What appPasswordResource emits. */
export const AppPasswordSchemas = resourceSchemas('ApplicationPassword', 'application-password', {
  attributes: Type.Object({
    device: Type.String(),
    application: Type.String(),
    password: Type.Optional(Type.String({ description: 'only in the answer of the POST that created it; shown once' })),
    created_at: Timestamp(),
    last_used_at: Type.Optional(Nullable(Timestamp(), 'in lists: when it last logged in; null: not yet')),
  }),
  example: {
    type: 'application-password',
    id: '1',
    attributes: { device: 'Laptop', application: 'Thunderbird', created_at: '2026-11-23T03:51:28.685Z', last_used_at: null },
    links: { self: 'https://api.example.net/email-addresses/1/application-passwords/1' },
  },
});

/** The address as a client sees it; `password` only right after it was generated. */
export function emailAddressResource(row: EmailAddressRow, links: LinkBuilder, password?: string): ResourceObject {
  const id = String(row.id);
  const mailbox = row.kind === 'mailbox';
  return {
    type: 'email-address',
    id,
    attributes: {
      address: unicodeAddress(row.address),
      address_ace: row.address,
      address_type: row.kind,
      description: row.description,
      antispam: row.antispam,
      forward_to: JSON.parse(row.forward_to) as string[],
      autoresponder: mailbox
        ? { text: row.autoresponder_text, active: row.autoresponder_active === 1, activates: row.autoresponder_activates, expires: row.autoresponder_expires }
        : null,
      quota: mailbox ? { limit_bytes: Number(row.quota_bytes), used_bytes: row.used_bytes === null ? null : Number(row.used_bytes), updated_at: row.usage_updated_at } : null,
      created_at: row.created_at,
      ...(password === undefined ? {} : { password }),
    },
    relationships: {
      package: ref('package', row.package_id),
      domain: ref('domain', row.zone),
      ...(mailbox ? { 'application-passwords': { links: { related: links.to(`/email-addresses/${id}/application-passwords`) } } } : {}),
    },
    links: { self: links.to('/email-addresses/', id) },
  };
}

/**
 * An application password: with `password` in the 201 answer (API guide "E-mail addresses": device,
 * application, password, created_at), with `last_used_at` in lists.
 */
export function appPasswordResource(addressId: string, row: AppPasswordRow, links: LinkBuilder, password?: string): ResourceObject {
  const id = String(row.id);
  return {
    type: 'application-password',
    id,
    attributes: {
      device: row.device,
      application: row.application,
      ...(password === undefined ? {} : { password }),
      created_at: row.created_at,
      ...(password === undefined ? { last_used_at: row.last_used_at } : {}),
    },
    links: { self: links.to(`/email-addresses/${addressId}/application-passwords/`, id) },
  };
}
