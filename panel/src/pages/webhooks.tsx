// Webhooks (API guide "Webhooks"): the shown customer's webhooks, adding one (its signing secret
// shown this once), changing its URL, events and description, pausing and resuming, deleting, and
// a link to its deliveries. Writes answer at once (201, 200, 204): no jobs here.
import { useState } from 'preact/hooks';
import { api, list, type Resource } from '../api/client';
import { ConfirmButton } from '../components/confirm-button';
import { DataTable } from '../components/data-table';
import { FormErrors } from '../components/errors';
import { Link } from '../components/link';
import { PageHeading } from '../components/page-heading';
import { useLoad } from '../components/use-load';
import { useI18n } from '../i18n';
import { useSession } from '../session-context';
import { apiErrors } from './page-errors';
import { WebhookForm, webhookAttributes, type WebhookInput } from './webhook-form';
import './account.css';

export interface WebhookAttributes {
  customer_id: string;
  url: string;
  events: string[];
  description: string;
  active: boolean;
  status: 'ok' | 'failing';
  failing_reason: string | null;
  secret?: string;
}
type Webhook = Resource<WebhookAttributes>;

const EMPTY: WebhookInput = { url: '', events: 'queue-job.done, queue-job.failed', description: '' };
const focusLater = (id: string) => setTimeout(() => document.getElementById(id)?.focus(), 0);

export function WebhooksPage() {
  const { t } = useI18n();
  const { session, customerId } = useSession();
  const [loaded, reload] = useLoad(() => list<WebhookAttributes>('/webhooks', { 'filter[customer_id]': customerId }), [customerId]);
  const [created, setCreated] = useState<Webhook | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [rowErrors, setRowErrors] = useState<{ id: string; errors: ReturnType<typeof apiErrors> } | null>(null);

  const body = (attributes: Record<string, unknown>, id?: string) => ({ data: { type: 'webhook', ...(id ? { id } : {}), attributes } });
  const create = async (v: WebhookInput) => {
    // A reseller names the end customer it acts for; its own webhooks need no customer_id.
    const owner = customerId === session.customer_id ? {} : { customer_id: customerId };
    const { data } = await api<Webhook>('POST', '/webhooks', { body: body({ ...owner, ...webhookAttributes(v) }) });
    setCreated(data);
    setNotice(null);
    reload();
    focusLater('webhook-secret-title');
  };
  const change = async (w: Webhook, attributes: Record<string, unknown>, message: string) => {
    setRowErrors(null);
    try {
      await api('PATCH', `/webhooks/${encodeURIComponent(w.id)}`, { body: body(attributes, w.id) });
      setNotice(message);
      reload();
    } catch (err) {
      setRowErrors({ id: w.id, errors: apiErrors(err) });
    }
  };
  const remove = async (w: Webhook) => {
    setRowErrors(null);
    try {
      await api('DELETE', `/webhooks/${encodeURIComponent(w.id)}`);
      setNotice(t('webhooks.deleted', { url: w.attributes.url }));
      reload();
      focusLater('main');
    } catch (err) {
      setRowErrors({ id: w.id, errors: apiErrors(err) });
    }
  };

  const hooks = loaded.state === 'ready' ? loaded.data : [];
  return (
    <section>
      <PageHeading title={t('webhooks.title')} />
      <p>{t('webhooks.intro')}</p>
      {loaded.state === 'loading' && <p role="status">{t('app.loading')}</p>}
      {loaded.state === 'error' && <FormErrors errors={apiErrors(loaded.error)} />}
      <p role="status" class={notice ? 'notice' : undefined}>
        {notice}
      </p>
      {created?.attributes.secret && (
        <div class="secret">
          <h2 id="webhook-secret-title" tabIndex={-1} class="h3">
            {t('webhooks.secret', { url: created.attributes.url })}
          </h2>
          <p>
            <code id="webhook-secret">{created.attributes.secret}</code>
          </p>
          <p class="hint">{t('webhooks.secret.note')}</p>
        </div>
      )}
      {loaded.state === 'ready' && !hooks.length && <p>{t('webhooks.empty')}</p>}
      {hooks.length > 0 && (
        <DataTable caption={t('webhooks.caption')} columns={[t('webhooks.url'), t('webhooks.events'), t('webhooks.description'), t('webhooks.state'), t('webhooks.actions')]}>
          {hooks.map((w) => {
            const a = w.attributes;
            return [
              <tr key={w.id} data-webhook={w.id}>
                <th scope="row" data-label={t('webhooks.url')}>
                  <code>{a.url}</code>
                </th>
                <td data-label={t('webhooks.events')}>{a.events.join(', ')}</td>
                <td data-label={t('webhooks.description')}>{a.description}</td>
                <td data-label={t('webhooks.state')}>
                  {a.active ? t('webhooks.active') : t('webhooks.paused')} ·{' '}
                  {a.status === 'ok' ? t('webhooks.status.ok') : t('webhooks.status.failing', { reason: a.failing_reason ?? '' })}
                </td>
                <td data-label={t('webhooks.actions')} class="row-actions">
                  <Link to={{ page: 'deliveries', webhook: w.id }} label={t('webhooks.deliveries.of', { url: a.url })}>
                    {t('webhooks.deliveries')}
                  </Link>{' '}
                  <button
                    type="button"
                    class="secondary"
                    id={`webhook-edit-${w.id}`}
                    aria-label={`${t('webhooks.edit')}: ${a.url}`}
                    aria-expanded={editing === w.id}
                    onClick={() => (setEditing(editing === w.id ? null : w.id), focusLater(`webhook-${w.id}-url`))}
                  >
                    {t('webhooks.edit')}
                  </button>
                  <button
                    type="button"
                    class="secondary"
                    aria-label={`${a.active ? t('webhooks.pause') : t('webhooks.resume')}: ${a.url}`}
                    onClick={() => change(w, { active: !a.active }, `${a.url}: ${a.active ? t('webhooks.paused') : t('webhooks.active')}`)}
                  >
                    {a.active ? t('webhooks.pause') : t('webhooks.resume')}
                  </button>
                  <ConfirmButton
                    id={`webhook-delete-${w.id}`}
                    label={t('webhooks.delete')}
                    ariaLabel={`${t('webhooks.delete')}: ${a.url}`}
                    question={t('webhooks.delete.confirm', { url: a.url })}
                    yes={t('webhooks.delete.yes')}
                    cancel={t('webhooks.cancel')}
                    onConfirm={() => remove(w)}
                  />
                  {rowErrors?.id === w.id && <FormErrors errors={rowErrors.errors} />}
                </td>
              </tr>,
              editing === w.id && (
                <tr key={`${w.id}-edit`} class="edit-row">
                  <td colSpan={5}>
                    <h2 class="h3">{t('webhooks.edit.title', { url: a.url })}</h2>
                    <WebhookForm
                      idPrefix={`webhook-${w.id}`}
                      initial={{ url: a.url, events: a.events.join(', '), description: a.description }}
                      submitLabel={t('webhooks.edit.submit')}
                      onSubmit={async (v) => {
                        await api('PATCH', `/webhooks/${encodeURIComponent(w.id)}`, { body: body(webhookAttributes(v), w.id) });
                        setEditing(null);
                        setNotice(t('webhooks.saved'));
                        reload();
                        focusLater(`webhook-edit-${w.id}`);
                      }}
                      onCancel={() => (setEditing(null), focusLater(`webhook-edit-${w.id}`))}
                    />
                  </td>
                </tr>
              ),
            ];
          })}
        </DataTable>
      )}
      <h2>{t('webhooks.create')}</h2>
      <WebhookForm idPrefix="webhook-new" initial={EMPTY} submitLabel={t('webhooks.create.submit')} onSubmit={create} resetAfter />
    </section>
  );
}
