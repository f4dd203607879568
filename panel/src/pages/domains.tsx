// The customer's domains (API guide "Domains"): registration, presence and its two flags; a
// presence domain links to its DNS records, and its flags switch in place (presence-flag.tsx).
import { list } from '../api/client';
import type { DomainAttributes } from '../api/domains';
import { DataTable } from '../components/data-table';
import { FormErrors } from '../components/errors';
import { Link } from '../components/link';
import { PageHeading } from '../components/page-heading';
import { useLoad } from '../components/use-load';
import { formatDate, useI18n } from '../i18n';
import { useSession } from '../session-context';
import { apiErrors } from './page-errors';
import { PresenceFlag } from './presence-flag';


export function DomainsPage() {
  const { t, lang } = useI18n();
  const { customerId } = useSession();
  const [loaded, reload] = useLoad(() => list<DomainAttributes>('/domains', { 'filter[owner_id]': customerId }), [customerId]);
  return (
    <section>
      <PageHeading title={t('domains.title')} />
      {loaded.state === 'loading' && <p role="status">{t('app.loading')}</p>}
      {loaded.state === 'error' && <FormErrors errors={apiErrors(loaded.error)} />}
      {loaded.state === 'ready' && !loaded.data.length && <p>{t('domains.empty')}</p>}
      {loaded.state === 'ready' && loaded.data.length > 0 && (
        <DataTable
          caption={t('domains.title')}
          columns={[t('domains.name'), t('domains.registration'), t('domains.presence'), t('domains.updateLock'), t('domains.migration')]}
        >
          {loaded.data.map((d) => {
            const { registration: r, presence: p } = d.attributes;
            return (
              <tr key={d.id} data-domain={d.id}>
                <th scope="row" data-label={t('domains.name')}>
                  {p ? (
                    <Link to={{ page: 'dns', domain: d.id }} label={t('domains.dns', { name: d.attributes.name })}>
                      {d.attributes.name}
                    </Link>
                  ) : (
                    d.attributes.name
                  )}
                </th>
                <td data-label={t('domains.registration')}>
                  {r ? `${r.status} · ${t('domains.expires', { date: formatDate(lang, r.expires_at) })}` : t('domains.notRegistered')}
                </td>
                <td data-label={t('domains.presence')}>{p ? t('domains.on') : t('domains.noPresence')}</td>
                <td data-label={t('domains.updateLock')}>{p ? <PresenceFlag key={`${d.id}-lock`} domain={d} flag="lock" onChanged={reload} /> : '—'}</td>
                <td data-label={t('domains.migration')}>{p ? <PresenceFlag key={`${d.id}-migration`} domain={d} flag="migration" onChanged={reload} /> : '—'}</td>
              </tr>
            );
          })}
        </DataTable>
      )}
    </section>
  );
}
