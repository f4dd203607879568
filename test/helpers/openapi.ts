// What the tests of the OpenAPI document share (docs/decisions/0006-openapi.md): the operation ids
// clients generate method names from, the extensions, walking the document's operations and
// schemas, and Redocly's lint engine.
import { createConfig, lintFromString, type NormalizedProblem } from '@redocly/openapi-core';
import { BASE } from '../helpers/app.js';

export const codeBody = (code: string) => ({ data: { type: 'totp-enrolment', attributes: { code } } });

export const VND = 'application/vnd.hostplane.v1+json';
export const METHODS = ['get', 'post', 'patch', 'delete', 'put'];

/** The operation ids clients generate method names from; a rename breaks them, so it shows here. */
export const OPERATION_IDS = {
  'GET /customers': 'listCustomers',
  'GET /customers/{id}': 'getCustomer',
  'PATCH /customers/{id}': 'updateCustomer',
  'GET /domains': 'listDomains',
  'GET /domains/{name}': 'getDomain',
  'PATCH /domains/{name}': 'updateDomain',
  'GET /packages': 'listPackages',
  'GET /packages/{id}': 'getPackage',
  'GET /plans': 'listPlans',
  'GET /plans/{id}': 'getPlan',
  'GET /queue-jobs': 'listQueueJobs',
  'GET /queue-jobs/{id}': 'getQueueJob',
  'GET /domain-availability/{domains}': 'checkDomainAvailability',
  'GET /dns-records': 'listDnsRecords',
  'POST /dns-records': 'createDnsRecord',
  'GET /dns-records/{id}': 'getDnsRecord',
  'DELETE /dns-records/{id}': 'deleteDnsRecord',
  'GET /databases': 'listDatabases',
  'POST /databases': 'createDatabase',
  'GET /databases/{id}': 'getDatabase',
  'PATCH /databases/{id}': 'updateDatabase',
  'POST /databases/{id}/password': 'resetDatabasePassword',
  'DELETE /databases/{id}': 'deleteDatabase',
  'GET /subdomains': 'listSubdomains',
  'POST /subdomains': 'createSubdomain',
  'GET /subdomains/{id}': 'getSubdomain',
  'PATCH /subdomains/{id}': 'updateSubdomain',
  'DELETE /subdomains/{id}': 'deleteSubdomain',
  'GET /email-addresses': 'listEmailAddresses',
  'POST /email-addresses': 'createEmailAddress',
  'GET /email-addresses/{id}': 'getEmailAddress',
  'PATCH /email-addresses/{id}': 'updateEmailAddress',
  'DELETE /email-addresses/{id}': 'deleteEmailAddress',
  'POST /email-addresses/{id}/password': 'resetEmailAddressPassword',
  'POST /email-addresses/{id}/forward-to/{target}': 'addForwardTarget',
  'DELETE /email-addresses/{id}/forward-to/{target}': 'removeForwardTarget',
  'GET /email-addresses/{id}/application-passwords': 'listApplicationPasswords',
  'POST /email-addresses/{id}/application-passwords': 'createApplicationPassword',
  'DELETE /email-addresses/{id}/application-passwords/{appId}': 'deleteApplicationPassword',
  'GET /ssh-keys': 'listSshKeys',
  'POST /ssh-keys': 'createSshKey',
  'GET /ssh-keys/{id}': 'getSshKey',
  'DELETE /ssh-keys/{id}': 'deleteSshKey',
  'GET /webhooks': 'listWebhooks',
  'POST /webhooks': 'createWebhook',
  'GET /webhooks/{id}': 'getWebhook',
  'PATCH /webhooks/{id}': 'updateWebhook',
  'DELETE /webhooks/{id}': 'deleteWebhook',
  'GET /webhooks/{id}/deliveries': 'listWebhookDeliveries',
  'GET /audit-events': 'listAuditEvents',
  'GET /audit-events/{id}': 'getAuditEvent',
  'POST /session': 'createSession',
  'GET /session': 'getSession',
  'DELETE /session': 'deleteSession',
  'POST /session/totp': 'enrolTotp',
  'POST /session/totp/confirm': 'confirmTotp',
  'DELETE /session/totp': 'disableTotp',
};

/** The panel's login and its session (API guide "Panel sessions (extension)"): on the session cookie, not a token, and no Idempotency-Key. */
export const isPanel = (o: { path: string }) => o.path === '/session' || o.path.startsWith('/session/');

/** Operations the original API does not have: each is marked `x-hostplane-extension: true` (API guide "Beyond the original API"). */
export const EXTENSION_OPERATIONS = ['GET /ssh-keys', 'POST /ssh-keys', 'GET /ssh-keys/{id}', 'DELETE /ssh-keys/{id}',
  'GET /webhooks', 'POST /webhooks', 'GET /webhooks/{id}', 'PATCH /webhooks/{id}', 'DELETE /webhooks/{id}', 'GET /webhooks/{id}/deliveries',
  'GET /audit-events', 'GET /audit-events/{id}',
  'POST /session', 'GET /session', 'DELETE /session', 'POST /session/totp', 'POST /session/totp/confirm', 'DELETE /session/totp'];

export interface Operation {
  /** `PATCH /customers/{id}` */
  key: string;
  method: string;
  path: string;
  op: any;
}

export const operations = (doc: any): Operation[] =>
  Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([p, item]) =>
    Object.entries(item)
      .filter(([m]) => METHODS.includes(m))
      .map(([m, op]) => ({ key: `${m.toUpperCase()} ${p}`, method: m.toUpperCase(), path: p, op })),
  );

export const successStatus = (op: any) => Number(Object.keys(op.responses).find((s) => s.startsWith('2')));
export const hasPathParams = (o: Operation) => o.path.includes('{');
export const readsBody = (o: Operation) => ['POST', 'PATCH', 'DELETE'].includes(o.method);

export const describeProblem = (p: NormalizedProblem) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`;

export async function lint(doc: unknown, rawConfig: Parameters<typeof createConfig>[0]) {
  const config = await createConfig(rawConfig);
  const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: `${BASE}/openapi.json`, config });
  return problems.map(describeProblem);
}

/** Calls `visit` on a schema and on every schema inside it: members, items, alternatives. */
export function eachSchema(schema: any, where: string, visit: (schema: any, where: string) => void) {
  if (!schema || typeof schema !== 'object') return;
  visit(schema, where);
  for (const [name, member] of Object.entries(schema.properties ?? {})) eachSchema(member, `${where}.${name}`, visit);
  if (schema.items) eachSchema(schema.items, `${where}[]`, visit);
  for (const k of ['anyOf', 'oneOf', 'allOf']) (schema[k] ?? []).forEach((alt: any, i: number) => eachSchema(alt, `${where}|${i}`, visit));
  if (typeof schema.additionalProperties === 'object') eachSchema(schema.additionalProperties, `${where}{}`, visit);
}

/** Every schema the document declares: the components and those of parameters, bodies and answers. */
export function documentSchemas(doc: any): [string, any][] {
  const out: [string, any][] = Object.entries(doc.components.schemas).map(([name, s]) => [`#/components/schemas/${name}`, s]);
  for (const o of operations(doc)) {
    for (const p of o.op.parameters ?? []) out.push([`${o.key} parameter ${p.name}`, p.schema]);
    for (const [type, m] of Object.entries<any>(o.op.requestBody?.content ?? {})) out.push([`${o.key} body ${type}`, m.schema]);
    for (const [status, r] of Object.entries<any>(o.op.responses)) {
      for (const [type, m] of Object.entries<any>(r.content ?? {})) out.push([`${o.key} ${status} ${type}`, m.schema]);
    }
  }
  return out;
}
