// One database (API guide "Databases"): its facts, changing its description (PATCH, 200 at once)
// and setting a new password after a confirmation (202: the password shown once, its job in
// place). Another customer's database answers 404: "not found".
import { useState } from 'preact/hooks';
import { api, type Resource } from '../api/client';
import { jobIdOf } from '../api/jobs';
import { ConfirmButton } from '../components/confirm-button';
import { FormErrors } from '../components/errors';
import { TextField } from '../components/field';
import { Link } from '../components/link';
import { NotReady } from '../components/not-ready';
import { OneTimeSecret } from '../components/one-time-secret';
import { PageHeading } from '../components/page-heading';
import { TrackedJobs, useTrackedJobs } from '../components/tracked-jobs';
import { useSubmit } from '../components/use-submit';
import { useLoad } from '../components/use-load';
import { formatDate, useI18n } from '../i18n';
import { typeLabel, usageText, type Database, type DatabaseAttributes } from './databases';
import { loadPackage } from './package-data';

async function loadDatabase(id: string) {
  const { data } = await api<Database>('GET', `/databases/${encodeURIComponent(id)}`);
  return { database: data, ...(await loadPackage(data.relationships!.package!.data!.id)) };
}

export function DatabasePage(props: { id: string }) {
  const { t, lang } = useI18n();
  const [loaded, reload] = useLoad(() => loadDatabase(props.id), [props.id]);
  const [jobs, track] = useTrackedJobs();
  const [password, setPassword] = useState<string | null>(null);

  if (loaded.state !== 'ready') return <NotReady loaded={loaded} title={t('db.caption')} />;

  const { database, pkg } = loaded.data;
  const a = database.attributes;
  const newPassword = async () => {
    const { data } = await api<Resource<DatabaseAttributes>>('POST', `/databases/${encodeURIComponent(database.id)}/password`);
    setPassword(data.attributes.password ?? '');
    track({ id: jobIdOf(data)!, action: 'update', label: t('db.passwordOf', { name: a.name }) });
  };

  return (
    <section>
      <p class="crumbs">
        <Link to={{ page: 'databases', packageId: pkg.id }}>{t('db.back', { name: pkg.attributes.name })}</Link>
      </p>
      <PageHeading title={t('db.change.title', { name: a.name })} />
      {password !== null && (
        <OneTimeSecret id="new-password" title={t('db.secret.title', { name: a.name })} secret={password} onDismiss={() => setPassword(null)}>
          <p class="hint">{t('db.secret.usable')}</p>
        </OneTimeSecret>
      )}
      <TrackedJobs jobs={jobs} />
      <dl class="facts" data-database={database.id}>
        <dt>{t('db.name')}</dt>
        <dd>
          <code>{a.name}</code>
        </dd>
        <dt>{t('db.type')}</dt>
        <dd>{typeLabel(a.db_type, a.version)}</dd>
        <dt>{t('db.server')}</dt>
        <dd>{a.server}</dd>
        <dt>{t('db.usage')}</dt>
        <dd>{usageText(t, lang, a.usage)}</dd>
        <dt>{t('db.created')}</dt>
        <dd>{formatDate(lang, a.created_at)}</dd>
      </dl>
      <h2>{t('web.description')}</h2>
      <DescriptionForm id={database.id} initial={a.description} onSaved={reload} />
      <h2>{t('db.password.new')}</h2>
      <ConfirmButton
        id="new-password-button"
        class="secondary"
        label={t('db.password.new')}
        question={t('db.password.confirm', { name: a.name })}
        yes={t('db.password.yes')}
        cancel={t('web.cancel')}
        onConfirm={newPassword}
      />
    </section>
  );
}

function DescriptionForm(props: { id: string; initial: string; onSaved(): void }) {
  const { t } = useI18n();
  const [value, setValue] = useState(props.initial);
  const [saved, setSaved] = useState(false);
  const { busy, byField: fieldErrors, form: formErrors, submitWith } = useSubmit(['description'], () => 'change-description');
  const submit = (e: Event) => {
    setSaved(false);
    return submitWith(async () => {
      await api('PATCH', `/databases/${encodeURIComponent(props.id)}`, { body: { data: { type: 'database', id: props.id, attributes: { description: value } } } });
      setSaved(true);
      props.onSaved();
    })(e);
  };
  return (
    <form onSubmit={submit} noValidate class="database-form">
      <FormErrors errors={formErrors} />
      <TextField id="change-description" label={t('web.description')} hint={t('web.description.hint')} value={value} onInput={setValue} errors={fieldErrors.description} />
      <div class="actions">
        <button type="submit" disabled={busy}>
          {t('db.change.submit')}
        </button>
      </div>
      <p role="status" class="hint">
        {saved ? t('db.saved') : ''}
      </p>
    </form>
  );
}
