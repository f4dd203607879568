// The package overview (API guide "Packages", "Plans"): each package of the customer shown, with
// its plan and how much of the plan's limits it uses (counted from the lists the API returns).
import { list, type Resource } from '../api/client';
import { FormErrors } from '../components/errors';
import { Link } from '../components/link';
import { PageHeading } from '../components/page-heading';
import { useLoad } from '../components/use-load';
import { formatDate, useI18n } from '../i18n';
import { useSession } from '../session-context';
import { apiErrors } from './page-errors';

interface PackageAttributes {
  name: string;
  linux_user: string;
  created_at: string;
  sftp_host: string | null;
  sftp_port: number | null;
  sftp_user: string;
}
interface PlanAttributes {
  name: string;
  max_databases: number;
  max_email_addresses: number;
  max_subdomains: number;
  mailbox_quota_mb: number;
  webspace_mb: number;
}

/** What a package holds, counted per package: the lists whose objects relate to a package. */
const COUNTED = ['domains', 'subdomains', 'databases', 'email-addresses'] as const;
type Counted = (typeof COUNTED)[number];

async function loadOverview(customerId: string) {
  const packages = await list<PackageAttributes>('/packages', { 'filter[owner_id]': customerId });
  if (!packages.length) return { packages, plans: new Map<string, Resource<PlanAttributes>>(), counts: new Map<string, Record<Counted, number>>() };
  const packageIds = packages.map((p) => p.id).join(',');
  const [plans, ...lists] = await Promise.all([
    list<PlanAttributes>('/plans'),
    ...COUNTED.map((segment) => list(`/${segment}`, { 'filter[package_id]': packageIds })),
  ]);
  const counts = new Map(packages.map((p) => [p.id, Object.fromEntries(COUNTED.map((c) => [c, 0])) as Record<Counted, number>]));
  COUNTED.forEach((segment, i) => {
    for (const object of lists[i]) {
      const packageId = object.relationships?.package?.data?.id;
      const c = packageId ? counts.get(packageId) : undefined;
      if (c) c[segment]++;
    }
  });
  return { packages, plans: new Map(plans.map((p) => [p.id, p])), counts };
}

export function OverviewPage() {
  const { t, lang } = useI18n();
  const { customerId } = useSession();
  const [loaded] = useLoad(() => loadOverview(customerId), [customerId]);
  return (
    <section>
      <PageHeading title={t('overview.title')} />
      {loaded.state === 'loading' && <p role="status">{t('app.loading')}</p>}
      {loaded.state === 'error' && <FormErrors errors={apiErrors(loaded.error)} />}
      {loaded.state === 'ready' && !loaded.data.packages.length && <p>{t('overview.empty')}</p>}
      {loaded.state === 'ready' && (
        <ul class="cards" aria-label={t('overview.title')}>
          {loaded.data.packages.map((p) => {
            const plan = loaded.data.plans.get(p.relationships?.plan?.data?.id ?? '')?.attributes;
            const c = loaded.data.counts.get(p.id)!;
            const ofMax = (used: number, max: number | undefined) => (max === undefined ? String(used) : t('overview.ofMax', { used, max }));
            return (
              <li class="card" key={p.id} data-package={p.id}>
                <h2>{p.attributes.name}</h2>
                <dl class="facts">
                  <dt>{t('overview.plan')}</dt>
                  <dd>{plan?.name ?? '—'}</dd>
                  <dt>{t('overview.linuxUser')}</dt>
                  <dd>
                    <code>{p.attributes.linux_user}</code>
                  </dd>
                  <dt>{t('overview.created')}</dt>
                  <dd>{formatDate(lang, p.attributes.created_at)}</dd>
                  {p.attributes.sftp_host && (
                    <>
                      <dt>{t('overview.sftp')}</dt>
                      <dd>
                        <code>
                          {p.attributes.sftp_user}@{p.attributes.sftp_host}:{p.attributes.sftp_port}
                        </code>
                      </dd>
                    </>
                  )}
                </dl>
                <h3>{t('overview.usage')}</h3>
                <dl class="facts usage">
                  <dt>{t('overview.domains')}</dt>
                  <dd>{c.domains}</dd>
                  <dt>{t('overview.subdomains')}</dt>
                  <dd>
                    <Link to={{ page: 'subdomains', packageId: p.id }} label={`${t('pkg.subdomains', { name: p.attributes.name })}: ${ofMax(c.subdomains, plan?.max_subdomains)}`}>
                      {ofMax(c.subdomains, plan?.max_subdomains)}
                    </Link>
                  </dd>
                  <dt>{t('overview.databases')}</dt>
                  <dd>
                    <Link to={{ page: 'databases', packageId: p.id }} label={`${t('pkg.databases', { name: p.attributes.name })}: ${ofMax(c.databases, plan?.max_databases)}`}>
                      {ofMax(c.databases, plan?.max_databases)}
                    </Link>
                  </dd>
                  <dt>{t('overview.emails')}</dt>
                  <dd>
                    <Link to={{ page: 'email' }} label={`${t('overview.emails')}: ${ofMax(c['email-addresses'], plan?.max_email_addresses)}`}>
                      {ofMax(c['email-addresses'], plan?.max_email_addresses)}
                    </Link>
                  </dd>
                  {plan && (
                    <>
                      <dt>{t('overview.webspace')}</dt>
                      <dd>{t('overview.mb', { n: plan.webspace_mb.toLocaleString(lang) })}</dd>
                      <dt>{t('overview.mailboxQuota')}</dt>
                      <dd>{t('overview.mb', { n: plan.mailbox_quota_mb.toLocaleString(lang) })}</dd>
                    </>
                  )}
                </dl>
                {c.domains > 0 && (
                  <p>
                    <Link to={{ page: 'domains' }}>{t('overview.showDomains', { name: p.attributes.name })}</Link>
                  </p>
                )}
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
