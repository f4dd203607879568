// The databases of one package (API guide "Databases"): the list, creating one (its password
// shown once), deleting one after a confirmation; each 202's job shown turning done or failed in
// place. A package that is not the user's answers 404 from the API: the page says so.
import { useState } from 'preact/hooks';
import { api, list, type Resource } from '../api/client';
import { jobIdOf } from '../api/jobs';
import { ChangeOrDelete } from '../components/change-or-delete';
import { DataTable } from '../components/data-table';
import { FormErrors } from '../components/errors';
import { SelectField, TextField } from '../components/field';
import { Link } from '../components/link';
import { NotReady } from '../components/not-ready';
import { OneTimeSecret } from '../components/one-time-secret';
import { PageHeading } from '../components/page-heading';
import { TrackedJobs, useTrackedJobs } from '../components/tracked-jobs';
import { useSubmit } from '../components/use-submit';
import { useLoad } from '../components/use-load';
import { formatDate, useI18n, type Lang, type T } from '../i18n';
import { loadPackage } from './package-data';

export interface DatabaseAttributes {
  db_type: string;
  version: string;
  server: string;
  name: string;
  username: string;
  description: string;
  usage: { bytes: number; updated_at: string } | null;
  created_at: string;
  password?: string;
}
export type Database = Resource<DatabaseAttributes>;

/** A password the API just showed, for the database named. */
export interface ShownSecret {
  name: string;
  password: string;
}

async function loadDatabases(packageId: string) {
  const [owner, databases] = await Promise.all([loadPackage(packageId), list<DatabaseAttributes>('/databases', { 'filter[package_id]': packageId })]);
  return { ...owner, databases };
}

const TYPE_NAMES: Record<string, string> = { mariadb: 'MariaDB', mysql: 'MySQL' };
export const typeLabel = (dbType: string, version: string) => `${TYPE_NAMES[dbType] ?? dbType} ${version}`;

/** The size of a database as the user's language writes it, with its measuring date. */
export function usageText(t: T, lang: Lang, usage: DatabaseAttributes['usage']): string {
  if (!usage) return t('db.usage.none');
  const units = ['byte', 'kilobyte', 'megabyte', 'gigabyte'] as const;
  let n = usage.bytes;
  let i = 0;
  for (; n >= 1024 && i < units.length - 1; i++) n /= 1024;
  const size = new Intl.NumberFormat(lang, { style: 'unit', unit: units[i], maximumFractionDigits: 1 }).format(n);
  return t('db.usage.updated', { size, date: formatDate(lang, usage.updated_at) });
}

export function DatabasesPage(props: { packageId: string }) {
  const { t, lang } = useI18n();
  const [loaded, reload] = useLoad(() => loadDatabases(props.packageId), [props.packageId]);
  const [jobs, track] = useTrackedJobs();
  const [secret, setSecret] = useState<ShownSecret | null>(null);

  if (loaded.state !== 'ready') return <NotReady loaded={loaded} title={t('db.caption')} />;

  const { pkg, plan, databases } = loaded.data;
  const label = (name: string) => t('db.label', { name });
  const create = async (version: string, description: string) => {
    const [db_type, ...rest] = version.split('-');
    const attributes = { package_id: pkg.id, db_type, version: rest.join('-'), description };
    const { data } = await api<Database>('POST', '/databases', { body: { data: { type: 'database', attributes } } });
    setSecret({ name: data.attributes.name, password: data.attributes.password ?? '' });
    track({ id: jobIdOf(data)!, action: 'create', label: label(data.attributes.name) });
    reload();
  };
  const remove = async (d: Database) => {
    const { data } = await api<Resource>('DELETE', `/databases/${encodeURIComponent(d.id)}`);
    track({ id: jobIdOf(data)!, action: 'delete', label: label(d.attributes.name) });
    reload();
  };

  return (
    <section>
      <p class="crumbs">
        <Link to={{ page: 'overview' }}>{t('pkg.back')}</Link>
      </p>
      <PageHeading title={t('db.title', { name: pkg.attributes.name })} />
      {secret && (
        <OneTimeSecret id="new-password" title={t('db.secret.title', { name: secret.name })} secret={secret.password} onDismiss={() => setSecret(null)}>
          <p class="hint">{t('db.secret.usable')}</p>
        </OneTimeSecret>
      )}
      <TrackedJobs jobs={jobs} onFinished={reload} />
      {!databases.length && <p>{t('db.empty')}</p>}
      {databases.length > 0 && (
        <DataTable caption={t('db.caption')} columns={[t('db.name'), t('db.type'), t('db.server'), t('web.description'), t('db.usage'), t('web.actions')]}>
          {databases.map((d) => {
            const a = d.attributes;
            return (
              <tr key={d.id} data-database={d.id}>
                <th scope="row" data-label={t('db.name')}>
                  <code>{a.name}</code>
                </th>
                <td data-label={t('db.type')}>{typeLabel(a.db_type, a.version)}</td>
                <td data-label={t('db.server')}>{a.server}</td>
                <td data-label={t('web.description')}>{a.description}</td>
                <td data-label={t('db.usage')}>{usageText(t, lang, a.usage)}</td>
                <td data-label={t('web.actions')} class="row-actions">
                  <ChangeOrDelete id={d.id} to={{ page: 'database', id: d.id }} name={label(a.name)} question={t('db.delete.confirm', { name: a.name })} onDelete={() => remove(d)} />
                </td>
              </tr>
            );
          })}
        </DataTable>
      )}
      <h2>{t('db.create')}</h2>
      <CreateForm versions={plan?.attributes.database_versions ?? []} onSubmit={create} />
    </section>
  );
}

const CREATE_FIELDS = ['description', 'db_type', 'version'] as const;

function CreateForm(props: { versions: string[]; onSubmit(version: string, description: string): Promise<void> }) {
  const { t } = useI18n();
  const [version, setVersion] = useState(props.versions[0] ?? '');
  const [description, setDescription] = useState('');
  const { busy, byField: fieldErrors, form: formErrors, submitWith } = useSubmit(CREATE_FIELDS, (f) => (f === 'description' ? 'new-description' : 'new-version'));
  const submit = submitWith(async () => {
    await props.onSubmit(version, description);
    setDescription('');
  });
  const versionErrors = [...(fieldErrors.db_type ?? []), ...(fieldErrors.version ?? [])];
  return (
    <form onSubmit={submit} noValidate class="database-form">
      <FormErrors errors={formErrors} />
      <div class="grid">
        <SelectField
          id="new-version"
          label={t('db.version')}
          hint={t('db.version.hint')}
          value={version}
          onInput={setVersion}
          options={props.versions.map((v) => ({ value: v, label: typeLabel(v.split('-')[0], v.split('-').slice(1).join('-')) }))}
          errors={versionErrors}
        />
        <TextField id="new-description" label={t('web.description')} hint={t('web.description.hint')} value={description} onInput={setDescription} errors={fieldErrors.description} />
      </div>
      <div class="actions">
        <button type="submit" disabled={busy}>
          {t('db.create.submit')}
        </button>
      </div>
    </form>
  );
}
