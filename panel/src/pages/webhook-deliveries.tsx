// The deliveries of one webhook (API guide "Webhooks": its deliveries): the attempts of the last 7
// days, newest first, optionally the failed ones only (filter[status]=failed). A webhook that is
// not the user's answers 404: the page says not found.
import { useState } from 'preact/hooks';
import { api, ApiError, list, type Resource } from '../api/client';
import { DataTable } from '../components/data-table';
import { FormErrors } from '../components/errors';
import { Link } from '../components/link';
import { PageHeading } from '../components/page-heading';
import { useLoad } from '../components/use-load';
import { formatDateTime as when, useI18n } from '../i18n';
import { NotFoundPage } from './not-found';
import { apiErrors } from './page-errors';
import type { WebhookAttributes } from './webhooks';
import './account.css';

interface DeliveryAttributes {
  event: string;
  event_id: string;
  attempt: number;
  status: 'delivered' | 'failed';
  response_status: number | null;
  error: string | null;
  attempted_at: string;
  next_attempt_at: string | null;
}

async function load(id: string, failedOnly: boolean) {
  const path = `/webhooks/${encodeURIComponent(id)}`;
  const [{ data }, deliveries] = await Promise.all([
    api<Resource<WebhookAttributes>>('GET', path),
    list<DeliveryAttributes>(`${path}/deliveries`, failedOnly ? { 'filter[status]': 'failed' } : undefined),
  ]);
  return { webhook: data, deliveries };
}

export function DeliveriesPage(props: { webhook: string }) {
  const { t, lang } = useI18n();
  const [failedOnly, setFailedOnly] = useState(false);
  const [loaded] = useLoad(() => load(props.webhook, failedOnly), [props.webhook, failedOnly]);
  if (loaded.state === 'error' && loaded.error instanceof ApiError && loaded.error.status === 404) return <NotFoundPage />;

  const result = (d: DeliveryAttributes) => {
    const text = d.status === 'delivered' ? t('webhooks.deliveries.delivered', { status: d.response_status ?? '' }) : t('webhooks.deliveries.failed', { error: d.error ?? String(d.response_status ?? '') });
    return d.next_attempt_at ? `${text} · ${t('webhooks.deliveries.next', { at: when(lang, d.next_attempt_at) })}` : text;
  };
  return (
    <section>
      <p class="crumbs">
        <Link to={{ page: 'webhooks' }}>{t('webhooks.deliveries.back')}</Link>
      </p>
      <PageHeading title={loaded.state === 'ready' ? t('webhooks.deliveries.of', { url: loaded.data.webhook.attributes.url }) : t('webhooks.deliveries.title')} />
      <div class="checkbox">
        <input id="failed-only" type="checkbox" checked={failedOnly} onChange={(e) => setFailedOnly((e.currentTarget as HTMLInputElement).checked)} />
        <label for="failed-only">{t('webhooks.deliveries.failedOnly')}</label>
      </div>
      {loaded.state === 'loading' && <p role="status">{t('app.loading')}</p>}
      {loaded.state === 'error' && <FormErrors errors={apiErrors(loaded.error)} />}
      {loaded.state === 'ready' && !loaded.data.deliveries.length && <p>{t('webhooks.deliveries.empty')}</p>}
      {loaded.state === 'ready' && loaded.data.deliveries.length > 0 && (
        <DataTable
          caption={t('webhooks.deliveries.caption')}
          columns={[t('webhooks.deliveries.event'), t('webhooks.deliveries.attempt'), t('webhooks.deliveries.result'), t('webhooks.deliveries.at')]}
        >
          {loaded.data.deliveries.map((d) => (
            <tr key={d.id} data-delivery={d.id} data-status={d.attributes.status}>
              <th scope="row" data-label={t('webhooks.deliveries.event')}>
                {d.attributes.event}
              </th>
              <td data-label={t('webhooks.deliveries.attempt')}>{d.attributes.attempt}</td>
              <td data-label={t('webhooks.deliveries.result')} class={d.attributes.status === 'failed' ? 'bad' : 'ok'}>
                {result(d.attributes)}
              </td>
              <td data-label={t('webhooks.deliveries.at')}>{when(lang, d.attributes.attempted_at)}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}
