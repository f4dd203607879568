// The e-mail addresses of the customer shown (API guide "E-mail addresses"), per package and, on
// choice, of one domain: each links to its settings; adding one (its generated password shown
// once) and deleting one (confirmed: a mailbox's mail is deleted for good), each job shown turning
// done or failed in place.
import { useState } from 'preact/hooks';
import { jobIdOf } from '../api/jobs';
import { DataTable } from '../components/data-table';
import { FormErrors } from '../components/errors';
import { SelectField } from '../components/field';
import { focusLater } from '../components/focus-later';
import { type TrackedJob } from '../components/job-status';
import { TrackedJobs } from '../components/tracked-jobs';
import { Link } from '../components/link';
import { PageHeading } from '../components/page-heading';
import { OneTimeSecret } from '../components/one-time-secret';
import { useLoad } from '../components/use-load';
import { useI18n, type MessageKey } from '../i18n';
import { useSession } from '../session-context';
import { AddressForm } from './email-address-form';
import { deleteAddress, loadMailOverview, type EmailAddress } from './email-api';
import { apiErrors } from './page-errors';
import './email.css';

const domainOf = (address: string) => address.slice(address.lastIndexOf('@') + 1);

export function EmailAddressesPage() {
  const { t } = useI18n();
  const { customerId } = useSession();
  const [loaded, reload] = useLoad(() => loadMailOverview(customerId), [customerId]);
  const [jobs, setJobs] = useState<TrackedJob[]>([]);
  const [secret, setSecret] = useState<{ address: string; password: string } | null>(null);
  const [shownDomain, setShownDomain] = useState('');
  const [confirming, setConfirming] = useState<string | null>(null);
  const [rowErrors, setRowErrors] = useState<{ id: string; errors: ReturnType<typeof apiErrors> } | null>(null);
  const track = (job: TrackedJob) => setJobs((all) => [job, ...all]);

  const created = (a: EmailAddress) => {
    track({ id: jobIdOf(a)!, action: 'create', label: a.attributes.address });
    if (a.attributes.password) setSecret({ address: a.attributes.address, password: a.attributes.password });
    reload();
  };
  const remove = async (a: EmailAddress) => {
    setConfirming(null);
    try {
      const job = await deleteAddress(a.id);
      track({ id: job.id, action: 'delete', label: a.attributes.address });
      reload();
    } catch (err) {
      setRowErrors({ id: a.id, errors: apiErrors(err) });
    }
  };

  return (
    <section>
      <PageHeading title={t('mail.title')} />
      <TrackedJobs jobs={jobs} onFinished={reload} />
      {secret && <OneTimeSecret id="shown-password" title={t('mail.secret.title', { address: secret.address })} secret={secret.password} onDismiss={() => setSecret(null)} />}
      {loaded.state === 'loading' && <p role="status">{t('app.loading')}</p>}
      {loaded.state === 'error' && <FormErrors errors={apiErrors(loaded.error)} />}
      {loaded.state === 'ready' && (
        <>
          {!loaded.data.packages.length && <p>{t('mail.noPackage')}</p>}
          {loaded.data.domains.length > 1 && (
            <div class="filter">
              <SelectField
                id="shown-domain"
                label={t('mail.filter')}
                value={shownDomain}
                onInput={setShownDomain}
                options={[{ value: '', label: t('mail.filter.all') }, ...loaded.data.domains.map((d) => ({ value: d, label: d }))]}
              />
            </div>
          )}
          {loaded.data.packages.map((p) => {
            const rows = loaded.data.addresses.filter(
              (a) => a.relationships?.package?.data?.id === p.id && (!shownDomain || domainOf(a.attributes.address) === shownDomain),
            );
            return (
              <div key={p.id} data-package={p.id}>
                <h2>{t('mail.package', { name: p.attributes.name })}</h2>
                {!rows.length ? (
                  <p>{t('mail.empty')}</p>
                ) : (
                  <DataTable
                    caption={t('mail.package', { name: p.attributes.name })}
                    columns={[t('mail.address'), t('mail.type'), t('mail.forwardTo'), t('mail.description'), t('mail.antispam'), t('mail.actions')]}
                  >
                    {rows.map((a) => (
                      <tr key={a.id} data-address={a.id}>
                        <th scope="row" data-label={t('mail.address')}>
                          <Link to={{ page: 'email-address', id: a.id }} label={t('mail.settingsOf', { address: a.attributes.address })}>
                            {a.attributes.address}
                          </Link>
                        </th>
                        <td data-label={t('mail.type')}>{t(`mail.type.${a.attributes.address_type}`)}</td>
                        <td data-label={t('mail.forwardTo')}>{a.attributes.forward_to.join(', ') || '—'}</td>
                        <td data-label={t('mail.description')}>{a.attributes.description || '—'}</td>
                        <td data-label={t('mail.antispam')}>{t(`mail.antispam.${a.attributes.antispam}` as MessageKey)}</td>
                        <td data-label={t('mail.actions')} class="row-actions">
                          {confirming === a.id ? (
                            <span class="confirm">
                              <span>{t(a.attributes.address_type === 'mailbox' ? 'mail.delete.confirmMailbox' : 'mail.delete.confirmForward', { address: a.attributes.address })}</span>
                              <button type="button" class="danger" id={`delete-yes-${a.id}`} onClick={() => remove(a)}>
                                {t('mail.delete.yes')}
                              </button>
                              <button type="button" class="secondary" onClick={() => (setConfirming(null), focusLater(`delete-${a.id}`))}>
                                {t('mail.cancel')}
                              </button>
                            </span>
                          ) : (
                            <button
                              type="button"
                              class="danger"
                              id={`delete-${a.id}`}
                              aria-label={`${t('mail.delete')}: ${a.attributes.address}`}
                              onClick={() => (setConfirming(a.id), focusLater(`delete-yes-${a.id}`))}
                            >
                              {t('mail.delete')}
                            </button>
                          )}
                          {rowErrors?.id === a.id && <FormErrors errors={rowErrors.errors} />}
                        </td>
                      </tr>
                    ))}
                  </DataTable>
                )}
              </div>
            );
          })}
          {loaded.data.packages.length > 0 && (
            <>
              <h2>{t('mail.create')}</h2>
              <AddressForm key={customerId} domains={loaded.data.domains} onCreated={created} />
            </>
          )}
        </>
      )}
    </section>
  );
}
