// The DNS record editor of one domain (API guide "DNS records"): the records with their origin
// (base, managed, yours), adding, editing and deleting; each 202's job shown turning done or
// failed in place. A domain that is not the user's answers 404 from the API: the page says so.
import { useRef, useState } from 'preact/hooks';
import { api, ApiError, idFromLink, list, type Resource } from '../api/client';
import { jobIdOf } from '../api/jobs';
import { DataTable } from '../components/data-table';
import { FormErrors } from '../components/errors';
import { type TrackedJob } from '../components/job-status';
import { TrackedJobs } from '../components/tracked-jobs';
import { Link } from '../components/link';
import { PageHeading } from '../components/page-heading';
import { useLoad } from '../components/use-load';
import { useI18n, type MessageKey } from '../i18n';
import { RecordForm, recordAttributes, type RecordInput } from './dns-record-form';
import type { DomainAttributes } from '../api/domains';
import { DnssecStatus } from './dnssec-status';
import { NotFoundPage } from './not-found';
import { apiErrors } from './page-errors';

interface RecordAttributes {
  record_type: string;
  name: string;
  fqdn: string;
  domain: string;
  data: string;
  ttl: number;
  tags: string[];
}
type DnsRecord = Resource<RecordAttributes>;

async function loadDomain(domain: string) {
  const [{ data }, records] = await Promise.all([
    api<Resource<DomainAttributes>>('GET', `/domains/${encodeURIComponent(domain)}`),
    list<RecordAttributes>('/dns-records', { 'filter[domain]': domain }),
  ]);
  return { domain: data, records };
}

const EMPTY: RecordInput = { record_type: 'A', name: '', data: '', ttl: '' };

export function DnsRecordsPage(props: { domain: string }) {
  const { t } = useI18n();
  const [loaded, reload] = useLoad(() => loadDomain(props.domain), [props.domain]);
  const [jobs, setJobs] = useState<TrackedJob[]>([]);
  const [editing, setEditing] = useState<string | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [rowErrors, setRowErrors] = useState<{ id: string; errors: ApiError['errors'] } | null>(null);
  const returnFocus = useRef<string | null>(null);

  // Not the user's domain (404), or no domain name at all (422, API guide "Domains"): nothing here.
  if (loaded.state === 'error' && loaded.error instanceof ApiError && (loaded.error.status === 404 || loaded.error.status === 422)) return <NotFoundPage />;
  if (loaded.state !== 'ready') {
    return (
      <section>
        <PageHeading title={t('dns.title', { name: props.domain })} />
        {loaded.state === 'loading' ? <p role="status">{t('app.loading')}</p> : <FormErrors errors={apiErrors(loaded.error)} />}
      </section>
    );
  }

  const domain = loaded.data.domain;
  const label = (type: string, name: string) => t('dns.record', { type, name: name || '@' });
  const track = (job: TrackedJob) => setJobs((all) => [job, ...all]);

  const create = async (v: RecordInput) => {
    const { data } = await api<Resource>('POST', '/dns-records', { body: { data: { type: 'dns-record', attributes: recordAttributes(domain.id, v) } } });
    track({ id: jobIdOf(data)!, action: 'create', label: label(v.record_type, v.name) });
    reload();
    return data;
  };
  const remove = async (r: DnsRecord) => {
    const { data } = await api<Resource>('DELETE', `/dns-records/${encodeURIComponent(r.id)}`);
    track({ id: jobIdOf(data)!, action: 'delete', label: label(r.attributes.record_type, r.attributes.name) });
    reload();
  };
  // The API has no change of a record: the changed one is added first, then the old one removed,
  // so a refused change (its errors at the form's fields) leaves the old record as it was.
  const replace = async (r: DnsRecord, v: RecordInput) => {
    const created = await create(v);
    setEditing(null);
    try {
      await remove(r);
    } catch (err) {
      setRowErrors({ id: idFromLink(created.links?.['dns-record']) ?? r.id, errors: apiErrors(err) });
    }
  };
  const confirmDelete = async (r: DnsRecord) => {
    setConfirming(null);
    try {
      await remove(r);
    } catch (err) {
      setRowErrors({ id: r.id, errors: apiErrors(err) });
    }
  };
  const focusLater = (elementId: string) => setTimeout(() => document.getElementById(elementId)?.focus(), 0);

  return (
    <section>
      <p class="crumbs">
        <Link to={{ page: 'domains' }}>{t('dns.back')}</Link>
      </p>
      <PageHeading title={t('dns.title', { name: domain.attributes.name })} />
      <TrackedJobs jobs={jobs} onFinished={reload} />
      {!loaded.data.records.length && <p>{t('dns.empty')}</p>}
      {loaded.data.records.length > 0 && (
        <DataTable
          caption={t('dns.caption')}
          class="records"
          columns={[t('dns.name'), t('dns.type'), t('dns.data'), t('dns.ttl'), t('dns.origin'), t('dns.actions')]}
        >
          {loaded.data.records.map((r) => {
            const a = r.attributes;
            const managed = a.tags.includes('managed');
            const name = label(a.record_type, a.name);
            return [
              <tr key={r.id} data-record={r.id} class={managed ? 'managed' : undefined}>
                <th scope="row" data-label={t('dns.name')}>
                  {a.name || '@'}
                </th>
                <td data-label={t('dns.type')}>{a.record_type}</td>
                <td data-label={t('dns.data')} class="data">
                  <code>{a.data}</code>
                </td>
                <td data-label={t('dns.ttl')}>{a.ttl}</td>
                <td data-label={t('dns.origin')}>
                  {a.tags.map((tag) => (
                    <Tag key={tag} tag={tag} />
                  ))}
                </td>
                <td data-label={t('dns.actions')} class="row-actions">
                  {managed ? null : confirming === r.id ? (
                    <span class="confirm">
                      <span>{t('dns.delete.confirm', { type: a.record_type, name: a.name || '@' })}</span>
                      <button type="button" class="danger" id={`delete-yes-${r.id}`} onClick={() => confirmDelete(r)}>
                        {t('dns.delete.yes')}
                      </button>
                      <button type="button" class="secondary" onClick={() => (setConfirming(null), focusLater(`delete-${r.id}`))}>
                        {t('dns.cancel')}
                      </button>
                    </span>
                  ) : (
                    <>
                      <button
                        type="button"
                        class="secondary"
                        id={`edit-${r.id}`}
                        aria-label={`${t('dns.edit')}: ${name}`}
                        aria-expanded={editing === r.id}
                        onClick={() => {
                          returnFocus.current = `edit-${r.id}`;
                          setEditing(editing === r.id ? null : r.id);
                          focusLater(`edit-${r.id}-record_type`);
                        }}
                      >
                        {t('dns.edit')}
                      </button>
                      <button
                        type="button"
                        class="danger"
                        id={`delete-${r.id}`}
                        aria-label={`${t('dns.delete')}: ${name}`}
                        onClick={() => (setConfirming(r.id), focusLater(`delete-yes-${r.id}`))}
                      >
                        {t('dns.delete')}
                      </button>
                    </>
                  )}
                  {rowErrors?.id === r.id && <FormErrors errors={rowErrors.errors} />}
                </td>
              </tr>,
              editing === r.id && (
                <tr key={`${r.id}-edit`} class="edit-row">
                  <td colSpan={6}>
                    <h2 class="h3">{t('dns.edit.title', { type: a.record_type, name: a.name || '@' })}</h2>
                    <RecordForm
                      idPrefix={`edit-${r.id}`}
                      domain={domain.attributes.name}
                      initial={{ record_type: a.record_type, name: a.name, data: a.data, ttl: String(a.ttl) }}
                      submitLabel={t('dns.edit.submit')}
                      note={t('dns.edit.note')}
                      onSubmit={(v) => replace(r, v)}
                      onCancel={() => (setEditing(null), focusLater(returnFocus.current ?? 'main'))}
                    />
                  </td>
                </tr>
              ),
            ];
          })}
        </DataTable>
      )}
      <h2>{t('dns.create')}</h2>
      <RecordForm idPrefix="new" domain={domain.attributes.name} initial={EMPTY} submitLabel={t('dns.create.submit')} onSubmit={async (v) => void (await create(v))} resetAfter />
      <DnssecStatus domain={domain} onChanged={reload} />
    </section>
  );
}

function Tag(props: { tag: string }) {
  const { t } = useI18n();
  const known = ['custom', 'base', 'managed'].includes(props.tag);
  const hint = props.tag === 'base' || props.tag === 'managed' ? t(`dns.tag.${props.tag}.hint` as MessageKey) : undefined;
  return (
    <span class={`tag tag-${props.tag}`} title={hint}>
      {known ? t(`dns.tag.${props.tag}` as MessageKey) : props.tag}
      {hint && <span class="visually-hidden"> ({hint})</span>}
    </span>
  );
}
