// Activity (API guide "Audit events"): the shown customer's audit trail as GET /audit-events
// answers it, newest first, a page at a time through the answer's paging links; filters path,
// status and a time range, the API's refusal of a value at its field (source.parameter).
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type Resource } from '../api/client';
import { DataTable } from '../components/data-table';
import { FormErrors } from '../components/errors';
import { TextField } from '../components/field';
import { PageHeading } from '../components/page-heading';
import { useSubmit } from '../components/use-submit';
import { formatDateTime, useI18n, type T } from '../i18n';
import { useSession } from '../session-context';
import './account.css';

interface AuditEventAttributes {
  created_at: string;
  method: string;
  path: string;
  status: number;
  customer_id: string | null;
  contact_id: string | null;
  token_id: string | null;
  client_ip: string;
  request_id: string;
  queue_job_id: string | null;
  idempotency_key: string | null;
}
interface Shown {
  events: Resource<AuditEventAttributes>[];
  next: string | null;
  prev: string | null;
  page: { number: number; total_pages: number };
  total: number;
}
interface Filters {
  path: string;
  status: string;
  since: string;
  until: string;
}

const EMPTY: Filters = { path: '', status: '', since: '', until: '' };
// The form's fields are named as the API's refusals name them (source.parameter).
const FIELDS = ['filter[path]', 'filter[status]', 'filter[since]', 'filter[until]'] as const;
const idOf = (field: string) => `activity-${field.slice('filter['.length, -1)}`;
const PAGE_SIZE = '25';

/** A datetime-local value as an ISO time in the browser's zone; one it cannot read goes as it is, for the API to refuse. */
function instant(local: string): string {
  const d = new Date(local);
  return Number.isNaN(d.getTime()) ? local : d.toISOString();
}

/** The query of the list: the shown customer's events (as the other pages ask), the filters given. */
function queryOf(customerId: string, f: Filters): Record<string, string> {
  const q: Record<string, string> = { 'filter[customer_id]': customerId, 'page[size]': PAGE_SIZE };
  if (f.path.trim()) q['filter[path]'] = f.path.trim();
  if (f.status.trim()) q['filter[status]'] = f.status.trim();
  if (f.since) q['filter[since]'] = instant(f.since);
  if (f.until) q['filter[until]'] = instant(f.until);
  return q;
}

/** A paging link's query: the panel asks its own origin whatever address the API's links name. */
const queryOfLink = (link: string) => Object.fromEntries(new URL(link, location.origin).searchParams);

function who(t: T, a: AuditEventAttributes): string {
  const parts = [a.contact_id && t('activity.contact', { id: a.contact_id }), a.token_id && t('activity.token', { id: a.token_id })].filter(Boolean);
  return parts.length ? parts.join(', ') : t('activity.none');
}

export function ActivityPage() {
  const { t, lang } = useI18n();
  const { customerId } = useSession();
  const [values, setValues] = useState<Filters>(EMPTY);
  const [shown, setShown] = useState<Shown | null>(null);
  const form = useSubmit(FIELDS, idOf);
  const pageInfo = useRef<HTMLParagraphElement>(null);
  const set = (key: keyof Filters) => (value: string) => setValues((v) => ({ ...v, [key]: value }));

  // A refused filter shows no list at all: never one that looks filtered and is not.
  const show = async (query: Record<string, string>) => {
    const ok = await form.run(async () => {
      const a = await api<Resource<AuditEventAttributes>[]>('GET', '/audit-events', { query });
      const meta = a.meta as { total: number; page: Shown['page'] };
      setShown({ events: a.data, next: a.links?.next ?? null, prev: a.links?.prev ?? null, page: meta.page, total: meta.total });
    });
    if (!ok) setShown(null);
    return ok;
  };
  useEffect(() => {
    show(queryOf(customerId, EMPTY));
  }, []);

  const turn = async (link: string) => {
    if (await show(queryOfLink(link))) pageInfo.current?.focus();
  };
  const clear = () => {
    setValues(EMPTY);
    form.reset();
    show(queryOf(customerId, EMPTY));
  };

  const none = t('activity.none');
  return (
    <section>
      <PageHeading title={t('activity.title')} />
      <p>{t('activity.intro')}</p>
      <h2>{t('activity.filters')}</h2>
      <form onSubmit={(e) => (e.preventDefault(), show(queryOf(customerId, values)))} noValidate class="narrow">
        <FormErrors errors={form.form} />
        <TextField id={idOf('filter[path]')} label={t('activity.path')} hint={t('activity.path.hint')} value={values.path} onInput={set('path')} errors={form.byField['filter[path]']} />
        <TextField id={idOf('filter[status]')} label={t('activity.status')} hint={t('activity.status.hint')} value={values.status} onInput={set('status')} errors={form.byField['filter[status]']} />
        <TextField id={idOf('filter[since]')} type="datetime-local" label={t('activity.since')} hint={t('activity.time.hint')} value={values.since} onInput={set('since')} errors={form.byField['filter[since]']} />
        <TextField id={idOf('filter[until]')} type="datetime-local" label={t('activity.until')} hint={t('activity.time.hint')} value={values.until} onInput={set('until')} errors={form.byField['filter[until]']} />
        <div class="row-actions">
          <button type="submit" disabled={form.busy}>
            {t('activity.submit')}
          </button>
          <button type="button" class="secondary" onClick={clear} disabled={form.busy}>
            {t('activity.clear')}
          </button>
        </div>
      </form>
      <p role="status">{form.busy ? t('app.loading') : ''}</p>
      {shown && !shown.events.length && <p>{t('activity.empty')}</p>}
      {shown && shown.events.length > 0 && (
        <>
          <DataTable
            caption={t('activity.caption')}
            class="activity"
            columns={[
              t('activity.at'),
              t('activity.method'),
              t('activity.requestPath'),
              t('activity.answer'),
              t('activity.who'),
              t('activity.clientIp'),
              t('activity.job'),
              t('activity.idempotencyKey'),
            ]}
          >
            {shown.events.map((e) => {
              const a = e.attributes;
              return (
                <tr key={e.id} data-event={e.id} data-status={a.status}>
                  <th scope="row" data-label={t('activity.at')}>
                    <time dateTime={a.created_at}>{formatDateTime(lang, a.created_at)}</time>
                  </th>
                  <td data-label={t('activity.method')}>{a.method}</td>
                  <td data-label={t('activity.requestPath')}>
                    <code>{a.path}</code>
                  </td>
                  <td data-label={t('activity.answer')} class={a.status >= 400 ? 'bad' : 'ok'}>
                    {a.status}
                  </td>
                  <td data-label={t('activity.who')}>{who(t, a)}</td>
                  <td data-label={t('activity.clientIp')}>
                    <code>{a.client_ip}</code>
                  </td>
                  <td data-label={t('activity.job')}>{a.queue_job_id ?? none}</td>
                  <td data-label={t('activity.idempotencyKey')}>{a.idempotency_key ? <code>{a.idempotency_key}</code> : none}</td>
                </tr>
              );
            })}
          </DataTable>
          <p ref={pageInfo} tabIndex={-1} id="activity-page">
            {t('activity.page', { number: shown.page.number, pages: shown.page.total_pages, total: shown.total })}
          </p>
          <div class="row-actions">
            {shown.prev && (
              <button type="button" class="secondary" onClick={() => turn(shown.prev!)} disabled={form.busy}>
                {t('activity.newer')}
              </button>
            )}
            {shown.next && (
              <button type="button" class="secondary" onClick={() => turn(shown.next!)} disabled={form.busy}>
                {t('activity.older')}
              </button>
            )}
          </div>
        </>
      )}
    </section>
  );
}
