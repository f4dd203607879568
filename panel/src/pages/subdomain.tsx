// One subdomain, changed (API guide "Subdomains": PATCH answers 202 with the subdomain as it will
// be): description, kind, path, PHP version, redirect target and kind, the HTTPS switch; the job
// shown turning done or failed in place. Another customer's subdomain answers 404: "not found".
import { api, type Resource } from '../api/client';
import { jobIdOf } from '../api/jobs';
import { Link } from '../components/link';
import { NotReady } from '../components/not-ready';
import { PageHeading } from '../components/page-heading';
import { TrackedJobs, useTrackedJobs } from '../components/tracked-jobs';
import { useLoad } from '../components/use-load';
import { useI18n, type MessageKey } from '../i18n';
import { loadPackage } from './package-data';
import { EMPTY_SUBDOMAIN, SubdomainForm, kindAttributes, type SubdomainInput } from './subdomain-form';
import { settingsOf, type SubdomainAttributes } from './subdomains';

async function loadSubdomain(id: string) {
  const { data } = await api<Resource<SubdomainAttributes>>('GET', `/subdomains/${encodeURIComponent(id)}`);
  return { subdomain: data, ...(await loadPackage(data.relationships!.package!.data!.id)) };
}

/** The form's values for a subdomain as it is. */
function inputOf(a: SubdomainAttributes): SubdomainInput {
  return {
    ...EMPTY_SUBDOMAIN,
    subdomain_type: a.subdomain_type,
    domain: a.domain,
    subdomain: a.subdomain,
    description: a.description,
    path: a.webspace?.path ?? '',
    php_version: a.webspace?.php_version ?? '',
    webspace_https: a.webspace?.redirect_to_https ?? false,
    target: a.redirect?.target ?? '',
    dynamic: a.redirect?.dynamic ?? false,
    redirect_https: a.redirect?.redirect_to_https ?? false,
  };
}

export function SubdomainPage(props: { id: string }) {
  const { t } = useI18n();
  const [loaded, reload] = useLoad(() => loadSubdomain(props.id), [props.id]);
  const [jobs, track] = useTrackedJobs();

  if (loaded.state !== 'ready') return <NotReady loaded={loaded} title={t('sub.caption')} />;

  const { subdomain, pkg, plan } = loaded.data;
  const a = subdomain.attributes;
  const save = async (v: SubdomainInput) => {
    const attributes = { description: v.description, ...kindAttributes(v) };
    const { data } = await api<Resource<SubdomainAttributes>>('PATCH', `/subdomains/${encodeURIComponent(subdomain.id)}`, {
      body: { data: { type: 'subdomain', id: subdomain.id, attributes } },
    });
    track({ id: jobIdOf(data)!, action: 'update', label: t('sub.label', { name: a.fqdn }) });
    reload();
  };

  return (
    <section>
      <p class="crumbs">
        <Link to={{ page: 'subdomains', packageId: pkg.id }}>{t('sub.back', { name: pkg.attributes.name })}</Link>
      </p>
      <PageHeading title={t('sub.change.title', { name: a.fqdn })} />
      <TrackedJobs jobs={jobs} onFinished={reload} />
      <dl class="facts" data-subdomain={subdomain.id}>
        <dt>{t('sub.kind')}</dt>
        <dd>{t(`sub.kind.${a.subdomain_type}` as MessageKey)}</dd>
        <dt>{t('sub.settings')}</dt>
        <dd>{settingsOf(t, a)}</dd>
      </dl>
      <h2>{t('web.change')}</h2>
      <SubdomainForm
        // A new form after each change: its fields start from the subdomain as it now is.
        key={JSON.stringify(a)}
        idPrefix="change"
        kinds={a.subdomain_type === 'email' ? ['email', 'webspace', 'redirect'] : ['webspace', 'redirect']}
        phpVersions={plan?.attributes.php_versions ?? []}
        initial={inputOf(a)}
        submitLabel={t('sub.change.submit')}
        onSubmit={save}
      />
    </section>
  );
}
