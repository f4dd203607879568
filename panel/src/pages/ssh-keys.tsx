// SSH keys (API guide "SSH keys"): the keys of the shown customer's packages, adding one (the 202
// answers its fingerprint; the job is done once the key logs in) and removing one (a job too).
// The API checks every key; its errors appear at the field.
import { useState } from 'preact/hooks';
import { api, list, type Resource } from '../api/client';
import { jobIdOf } from '../api/jobs';
import { ConfirmButton } from '../components/confirm-button';
import { DataTable } from '../components/data-table';
import { FormErrors } from '../components/errors';
import { SelectField, TextField } from '../components/field';
import { type TrackedJob } from '../components/job-status';
import { TrackedJobs } from '../components/tracked-jobs';
import { PageHeading } from '../components/page-heading';
import { useLoad } from '../components/use-load';
import { useSubmit } from '../components/use-submit';
import { formatDate, useI18n } from '../i18n';
import { useSession } from '../session-context';
import { apiErrors } from './page-errors';
import './account.css';

interface PackageAttributes {
  name: string;
  sftp_host: string | null;
  sftp_port: number | null;
  sftp_user: string;
}
interface SshKeyAttributes {
  package_id: string;
  public_key: string;
  fingerprint: string;
  algorithm: string;
  description: string;
  created_at: string;
  last_used_at: string | null;
}

const FIELDS = ['package_id', 'public_key', 'description'] as const;

async function load(customerId: string) {
  const packages = await list<PackageAttributes>('/packages', { 'filter[owner_id]': customerId });
  const keys = await Promise.all(packages.map((p) => list<SshKeyAttributes>('/ssh-keys', { 'filter[package_id]': p.id })));
  return { packages, keys: keys.flat() };
}

export function SshKeysPage() {
  const { t, lang } = useI18n();
  const { customerId } = useSession();
  const [loaded, reload] = useLoad(() => load(customerId), [customerId]);
  const [jobs, setJobs] = useState<TrackedJob[]>([]);
  const [values, setValues] = useState({ package_id: '', public_key: '', description: '' });
  const [rowErrors, setRowErrors] = useState<{ id: string; errors: ReturnType<typeof apiErrors> } | null>(null);
  const add = useSubmit(FIELDS, (f) => `key-${f}`);
  const track = (job: TrackedJob) => setJobs((all) => [job, ...all]);
  const set = (key: keyof typeof values) => (value: string) => setValues((v) => ({ ...v, [key]: value }));

  if (loaded.state !== 'ready') {
    return (
      <section>
        <PageHeading title={t('sshKeys.title')} />
        {loaded.state === 'loading' ? <p role="status">{t('app.loading')}</p> : <FormErrors errors={apiErrors(loaded.error)} />}
      </section>
    );
  }
  const { packages, keys } = loaded.data;
  const packageName = (id: string) => packages.find((p) => p.id === id)?.attributes.name ?? id;
  const packageId = values.package_id || packages[0]?.id || '';

  const submit = async (e: Event) => {
    e.preventDefault();
    const ok = await add.run(async () => {
      const attributes = { package_id: packageId, public_key: values.public_key.trim(), description: values.description };
      const { data } = await api<Resource>('POST', '/ssh-keys', { body: { data: { type: 'ssh-key', attributes } } });
      track({ id: jobIdOf(data)!, action: 'create', label: t('sshKeys.key', { fingerprint: String(data.attributes.fingerprint) }) });
      reload();
    });
    if (ok) setValues((v) => ({ ...v, public_key: '', description: '' }));
  };
  const remove = async (k: Resource<SshKeyAttributes>) => {
    setRowErrors(null);
    try {
      const { data } = await api<Resource>('DELETE', `/ssh-keys/${encodeURIComponent(k.id)}`);
      track({ id: jobIdOf(data)!, action: 'delete', label: t('sshKeys.key', { fingerprint: k.attributes.fingerprint }) });
    } catch (err) {
      setRowErrors({ id: k.id, errors: apiErrors(err) });
    }
  };

  return (
    <section>
      <PageHeading title={t('sshKeys.title')} />
      <p>{t('sshKeys.intro')}</p>
      <TrackedJobs jobs={jobs} onFinished={reload} />
      {!keys.length && <p>{t('sshKeys.empty')}</p>}
      {keys.length > 0 && (
        <DataTable
          caption={t('sshKeys.caption')}
          columns={[t('sshKeys.fingerprint'), t('sshKeys.algorithm'), t('sshKeys.package'), t('sshKeys.description'), t('sshKeys.lastUsed'), t('sshKeys.actions')]}
        >
          {keys.map((k) => {
            const a = k.attributes;
            return (
              <tr key={k.id} data-key={k.id}>
                <th scope="row" data-label={t('sshKeys.fingerprint')}>
                  <code>{a.fingerprint}</code>
                </th>
                <td data-label={t('sshKeys.algorithm')}>{a.algorithm}</td>
                <td data-label={t('sshKeys.package')}>{packageName(a.package_id)}</td>
                <td data-label={t('sshKeys.description')}>{a.description}</td>
                <td data-label={t('sshKeys.lastUsed')}>{a.last_used_at ? formatDate(lang, a.last_used_at) : t('sshKeys.never')}</td>
                <td data-label={t('sshKeys.actions')} class="row-actions">
                  <ConfirmButton
                    id={`key-delete-${k.id}`}
                    label={t('sshKeys.delete')}
                    ariaLabel={`${t('sshKeys.delete')}: ${a.fingerprint}`}
                    question={t('sshKeys.delete.confirm', { fingerprint: a.fingerprint })}
                    yes={t('sshKeys.delete.yes')}
                    cancel={t('sshKeys.cancel')}
                    onConfirm={() => remove(k)}
                  />
                  {rowErrors?.id === k.id && <FormErrors errors={rowErrors.errors} />}
                </td>
              </tr>
            );
          })}
        </DataTable>
      )}
      {packages
        .filter((p) => p.attributes.sftp_host)
        .map((p) => (
          <p key={p.id} class="hint">
            {packageName(p.id)}: {t('sshKeys.connect', { port: p.attributes.sftp_port ?? 22, user: p.attributes.sftp_user, host: p.attributes.sftp_host ?? '' })}
          </p>
        ))}
      <h2>{t('sshKeys.add')}</h2>
      {!packages.length ? (
        <p>{t('sshKeys.noPackage')}</p>
      ) : (
        <form onSubmit={submit} noValidate class="narrow">
          <FormErrors errors={add.form} />
          <SelectField
            id="key-package_id"
            label={t('sshKeys.package')}
            value={packageId}
            onInput={set('package_id')}
            options={packages.map((p) => ({ value: p.id, label: p.attributes.name }))}
            errors={add.byField.package_id}
          />
          <TextField id="key-public_key" label={t('sshKeys.publicKey')} hint={t('sshKeys.publicKey.hint')} required value={values.public_key} onInput={set('public_key')} errors={add.byField.public_key} />
          <TextField id="key-description" label={t('sshKeys.description')} value={values.description} onInput={set('description')} errors={add.byField.description} />
          <button type="submit" disabled={add.busy}>
            {t('sshKeys.add.submit')}
          </button>
        </form>
      )}
    </section>
  );
}
