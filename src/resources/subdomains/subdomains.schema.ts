// subdomain (API guide "Subdomains"): request bodies and the wire representation.
//
// Attribute order is fixed by the API guide "Subdomains": `subdomain_type, description, domain,
// subdomain, fqdn, fqdn_ace, webspace, redirect, created_at`. `webspace` and `redirect` are objects
// or null: an e-mail subdomain has both null, an uninitialized redirect (customer menu) has
// `"redirect":null`.
import { Type } from 'typebox';
import { ref, type LinkBuilder, type ResourceObject } from '../../jsonapi/document.js';
import { CreateBody, Nullable, StringEnum, Timestamp, ToOne, UpdateBody, idParam, resourceSchemas } from '../../jsonapi/schema.js';
import { fqdnOf, toUnicode, unicodeName } from '../../domain-name.js';
import { PHP_VERSIONS } from '../../php-versions.js';
import type { SubdomainRow } from './subdomains.repository.js';
import { SUBDOMAIN_TYPES } from './subdomains.rules.js';

export const SUBDOMAIN_FILTERS = ['package_id', 'domain'] as const;

const Description = Type.String({ maxLength: 255, description: 'free text for your own use; null stores ""' });

// Values are judged by subdomains.rules.ts (422 pointing at the member, with what is possible);
// the schema fixes the shape.
const WebspaceIn = Type.Object(
  {
    path: Type.Optional(Type.String({ description: 'the document directory relative to your home, e.g. /htdocs/shop/' })),
    php_version: Type.Optional(Nullable(Type.String(), `one of ${PHP_VERSIONS.join(', ')} that your plan offers and the web server has; null: the package default`)),
    redirect_to_https: Type.Optional(Type.Boolean({ description: 'send plain-HTTP visitors to https first' })),
  },
  { additionalProperties: false },
);
const RedirectIn = Type.Object(
  {
    target: Type.Optional(Type.String({ description: 'an absolute http or https URL' })),
    dynamic: Type.Optional(Type.Boolean({ description: 'keep the request path (the target must end with /); default false' })),
    redirect_to_https: Type.Optional(Type.Boolean({ description: 'send plain-HTTP visitors to https first' })),
  },
  { additionalProperties: false },
);

export const SubdomainCreateBody = CreateBody(
  'subdomain',
  Type.Object(
    {
      subdomain_type: Type.String({ description: `${SUBDOMAIN_TYPES.join(', ')}`, examples: ['redirect'] }),
      description: Type.Optional(Nullable(Description)),
      domain: Type.String({ maxLength: 1024, description: 'a presence domain of yours, without subdomains', examples: ['shop-demo.example'] }),
      subdomain: Type.String({ maxLength: 1024, description: 'the label(s) in front of the domain, e.g. "blog" or "eu.shop"', examples: ['blog'] }),
      webspace: Type.Optional(Nullable(WebspaceIn)),
      redirect: Type.Optional(Nullable(RedirectIn)),
    },
    { additionalProperties: false },
  ),
  { subdomain_type: 'redirect', domain: 'shop-demo.example', subdomain: 'blog', redirect: { target: 'https://blog-demo.example/', dynamic: true } },
);

export const SubdomainUpdateBody = UpdateBody(
  'subdomain',
  Type.Object(
    {
      description: Type.Optional(Nullable(Description)),
      webspace: Type.Optional(Nullable(WebspaceIn)),
      redirect: Type.Optional(Nullable(RedirectIn)),
      // Accepted by the schema so that the answer can say why they cannot change.
      subdomain_type: Type.Optional(Type.Unknown({ description: 'cannot be changed: it follows webspace.path and redirect.target' })),
      domain: Type.Optional(Type.Unknown({ description: 'cannot be changed' })),
      subdomain: Type.Optional(Type.Unknown({ description: 'cannot be changed' })),
    },
    { additionalProperties: false },
  ),
  { id: '1', attributes: { redirect: { target: 'https://blog-demo.example/news/' } } },
);

/** The example is the first subdomain of a new store (the POST example creates it). */
export const SubdomainIdParam = idParam('1');

const WebspaceOut = Type.Object({
  path: Type.String({ description: 'relative to the home, with a leading and a trailing /' }),
  php_version: Nullable(Type.String(), 'null: the package default'),
  redirect_to_https: Type.Boolean(),
});
const RedirectOut = Type.Object({ target: Type.String(), dynamic: Type.Boolean(), redirect_to_https: Type.Boolean() });

/** What subdomainResource emits (OpenAPI components Subdomain, SubdomainDocument, SubdomainList). */
export const SubdomainSchemas = resourceSchemas('Subdomain', 'subdomain', {
  attributes: Type.Object({
    subdomain_type: StringEnum([...SUBDOMAIN_TYPES]),
    description: Type.String(),
    domain: Type.String({ description: 'the parent domain (its id, ACE)' }),
    subdomain: Type.String({ description: 'the label(s), IDN labels in Unicode' }),
    fqdn: Type.String({ description: 'the full name, IDN labels in Unicode' }),
    fqdn_ace: Type.String({ description: 'the same in ACE (punycode) form' }),
    webspace: Nullable(WebspaceOut, 'the site settings of a webspace; null for other kinds'),
    redirect: Nullable(RedirectOut, 'the redirect of a redirect subdomain; null for other kinds and for a redirect not set up yet'),
    created_at: Timestamp(),
  }),
  relationships: Type.Object({ package: ToOne('package'), domain: ToOne('domain') }),
  links: Type.Object({
    self: Type.String({ description: 'URL of this object' }),
    'queue-job': Type.Optional(Type.String({ description: 'in the 202 answers: URL of the job that applies the change' })),
  }),
  example: {
    type: 'subdomain',
    id: '1',
    attributes: {
      subdomain_type: 'redirect',
      description: '',
      domain: 'shop-demo.example',
      subdomain: 'blog',
      fqdn: 'blog.shop-demo.example',
      fqdn_ace: 'blog.shop-demo.example',
      webspace: null,
      redirect: { target: 'https://blog-demo.example/', dynamic: true, redirect_to_https: false },
      created_at: '2026-11-23T03:51:28.685Z',
    },
    relationships: { package: { data: { type: 'package', id: '2' } }, domain: { data: { type: 'domain', id: 'shop-demo.example' } } },
    links: { self: 'https://api.example.net/subdomains/1' },
  },
});

export function subdomainResource(row: SubdomainRow, links: LinkBuilder): ResourceObject {
  const id = String(row.id);
  return {
    type: 'subdomain',
    id,
    attributes: {
      subdomain_type: row.kind,
      description: row.description,
      domain: row.domain,
      subdomain: unicodeName(row.name),
      fqdn: fqdnOf(unicodeName(row.name), toUnicode(row.domain)),
      fqdn_ace: fqdnOf(row.name, row.domain),
      webspace: row.kind === 'webspace' ? { path: row.webspace_path, php_version: row.php_version, redirect_to_https: row.webspace_https === 1 } : null,
      redirect:
        row.kind === 'redirect' && row.redirect_target !== null
          ? { target: row.redirect_target, dynamic: row.redirect_dynamic === 1, redirect_to_https: row.redirect_https === 1 }
          : null,
      created_at: row.created_at,
    },
    relationships: { package: ref('package', row.package_id), domain: ref('domain', row.domain) },
    links: { self: links.to('/subdomains/', id) },
  };
}
