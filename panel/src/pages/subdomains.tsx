// The subdomains of one package (API guide "Subdomains"): the list with each one's kind and
// settings, adding one, deleting one after a confirmation; each 202's job shown turning done or
// failed in place. A package that is not the user's answers 404 from the API: the page says so.
import { api, list, type Resource } from '../api/client';
import { jobIdOf } from '../api/jobs';
import { ChangeOrDelete } from '../components/change-or-delete';
import { DataTable } from '../components/data-table';
import { Link } from '../components/link';
import { NotReady } from '../components/not-ready';
import { PageHeading } from '../components/page-heading';
import { TrackedJobs, useTrackedJobs } from '../components/tracked-jobs';
import { useLoad } from '../components/use-load';
import { useI18n, type MessageKey, type T } from '../i18n';
import type { DomainAttributes } from '../api/domains';
import { loadPackage } from './package-data';
import { EMPTY_SUBDOMAIN, KINDS, SubdomainForm, kindAttributes, type Kind, type SubdomainInput } from './subdomain-form';

export interface SubdomainAttributes {
  subdomain_type: Kind;
  description: string;
  domain: string;
  subdomain: string;
  fqdn: string;
  webspace: { path: string; php_version: string | null; redirect_to_https: boolean } | null;
  redirect: { target: string; dynamic: boolean; redirect_to_https: boolean } | null;
}
export type Subdomain = Resource<SubdomainAttributes>;

async function loadSubdomains(packageId: string) {
  const [owner, subdomains, domains] = await Promise.all([
    loadPackage(packageId),
    list<SubdomainAttributes>('/subdomains', { 'filter[package_id]': packageId }),
    list<DomainAttributes>('/domains', { 'filter[package_id]': packageId }),
  ]);
  return { ...owner, subdomains, domains: domains.filter((d) => d.attributes.presence).map((d) => d.id) };
}

/** A subdomain's settings in a few words: the path and PHP of a webspace, the target of a redirect. */
export function settingsOf(t: T, a: SubdomainAttributes): string {
  const flags = (https: boolean, dynamic = false) => [dynamic ? t('sub.dynamicShort') : '', https ? t('sub.httpsShort') : ''].filter(Boolean).join(', ');
  if (a.webspace) {
    const php = a.webspace.php_version ? t('sub.phpOf', { version: a.webspace.php_version }) : t('sub.php.default');
    return [a.webspace.path, php, flags(a.webspace.redirect_to_https)].filter(Boolean).join(' · ');
  }
  if (a.subdomain_type === 'redirect') {
    if (!a.redirect) return t('sub.noTarget');
    return [`→ ${a.redirect.target}`, flags(a.redirect.redirect_to_https, a.redirect.dynamic)].filter(Boolean).join(' · ');
  }
  return '—';
}

export function SubdomainsPage(props: { packageId: string }) {
  const { t } = useI18n();
  const [loaded, reload] = useLoad(() => loadSubdomains(props.packageId), [props.packageId]);
  const [jobs, track] = useTrackedJobs();

  if (loaded.state !== 'ready') return <NotReady loaded={loaded} title={t('sub.caption')} />;

  const { pkg, plan, subdomains, domains } = loaded.data;
  const label = (fqdn: string) => t('sub.label', { name: fqdn });
  const create = async (v: SubdomainInput) => {
    const attributes = { subdomain_type: v.subdomain_type, domain: v.domain, subdomain: v.subdomain, description: v.description, ...kindAttributes(v) };
    const { data } = await api<Resource<SubdomainAttributes>>('POST', '/subdomains', { body: { data: { type: 'subdomain', attributes } } });
    track({ id: jobIdOf(data)!, action: 'create', label: label(data.attributes.fqdn) });
    reload();
  };
  const remove = async (s: Subdomain) => {
    const { data } = await api<Resource>('DELETE', `/subdomains/${encodeURIComponent(s.id)}`);
    track({ id: jobIdOf(data)!, action: 'delete', label: label(s.attributes.fqdn) });
    reload();
  };

  return (
    <section>
      <p class="crumbs">
        <Link to={{ page: 'overview' }}>{t('pkg.back')}</Link>
      </p>
      <PageHeading title={t('sub.title', { name: pkg.attributes.name })} />
      <TrackedJobs jobs={jobs} onFinished={reload} />
      {!subdomains.length && <p>{t('sub.empty')}</p>}
      {subdomains.length > 0 && (
        <DataTable caption={t('sub.caption')} columns={[t('sub.name'), t('sub.kind'), t('sub.settings'), t('web.description'), t('web.actions')]}>
          {subdomains.map((s) => {
            const a = s.attributes;
            return (
              <tr key={s.id} data-subdomain={s.id}>
                <th scope="row" data-label={t('sub.name')}>
                  {a.fqdn}
                </th>
                <td data-label={t('sub.kind')}>{t(`sub.kind.${a.subdomain_type}` as MessageKey)}</td>
                <td data-label={t('sub.settings')} class="data">
                  {settingsOf(t, a)}
                </td>
                <td data-label={t('web.description')}>{a.description}</td>
                <td data-label={t('web.actions')} class="row-actions">
                  <ChangeOrDelete id={s.id} to={{ page: 'subdomain', id: s.id }} name={label(a.fqdn)} question={t('sub.delete.confirm', { name: a.fqdn })} onDelete={() => remove(s)} />
                </td>
              </tr>
            );
          })}
        </DataTable>
      )}
      <h2>{t('sub.create')}</h2>
      {domains.length ? (
        <SubdomainForm
          idPrefix="new"
          domains={domains}
          kinds={KINDS}
          phpVersions={plan?.attributes.php_versions ?? []}
          initial={{ ...EMPTY_SUBDOMAIN, domain: domains[0] }}
          submitLabel={t('sub.create.submit')}
          onSubmit={create}
          resetAfter
        />
      ) : (
        <p>{t('sub.noDomain')}</p>
      )}
    </section>
  );
}
