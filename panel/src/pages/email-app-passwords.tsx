// A mailbox's application passwords (API guide "E-mail addresses"): the list with each one's last
// login, adding one (its password shown once) and deleting one (it stops working at once).
import { useState } from 'preact/hooks';
import { DataTable } from '../components/data-table';
import { FormErrors } from '../components/errors';
import { TextField } from '../components/field';
import { focusLater } from '../components/focus-later';
import { OneTimeSecret } from '../components/one-time-secret';
import { useLoad } from '../components/use-load';
import { useSubmit } from '../components/use-submit';
import { formatDate, useI18n } from '../i18n';
import { appPasswords, createAppPassword, deleteAppPassword, type EmailAddress } from './email-api';
import { apiErrors } from './page-errors';

const FIELDS = ['device', 'application'] as const;

export function AppPasswordsSection(props: { address: EmailAddress }) {
  const { t, lang } = useI18n();
  const { id } = props.address;
  const [loaded, reload] = useLoad(() => appPasswords(id), [id]);
  const [device, setDevice] = useState('');
  const [application, setApplication] = useState('');
  const [secret, setSecret] = useState<{ title: string; password: string } | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [rowErrors, setRowErrors] = useState<{ id: string; errors: ReturnType<typeof apiErrors> } | null>(null);
  const s = useSubmit(FIELDS, (f) => `app-${f}`);
  const when = (iso: string | null | undefined) => (iso ? new Intl.DateTimeFormat(lang === 'de' ? 'de-DE' : 'en-GB', { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(iso)) : t('mail.app.never'));

  const submit = async (e: Event) => {
    e.preventDefault();
    await s.run(async () => {
      const created = await createAppPassword(id, { device, application });
      setSecret({ title: t('mail.app.secret', { device: created.attributes.device, application: created.attributes.application }), password: created.attributes.password ?? '' });
      setDevice('');
      setApplication('');
      reload();
    });
  };
  const remove = async (appId: string) => {
    setConfirming(null);
    try {
      await deleteAppPassword(id, appId);
      reload();
      document.getElementById('app-device')?.focus();
    } catch (err) {
      setRowErrors({ id: appId, errors: apiErrors(err) });
    }
  };

  return (
    <>
      <h2>{t('mail.app')}</h2>
      <p class="hint">{t('mail.app.intro')}</p>
      {secret && <OneTimeSecret id="new-app-password" title={secret.title} secret={secret.password} onDismiss={() => setSecret(null)} />}
      {loaded.state === 'error' && <FormErrors errors={apiErrors(loaded.error)} />}
      {loaded.state === 'ready' && !loaded.data.length && <p>{t('mail.app.none')}</p>}
      {loaded.state === 'ready' && loaded.data.length > 0 && (
        <DataTable caption={t('mail.app')} columns={[t('mail.app.device'), t('mail.app.application'), t('overview.created'), t('mail.app.lastUsed'), t('mail.actions')]}>
          {loaded.data.map((p) => (
            <tr key={p.id} data-app-password={p.id}>
              <th scope="row" data-label={t('mail.app.device')}>
                {p.attributes.device}
              </th>
              <td data-label={t('mail.app.application')}>{p.attributes.application}</td>
              <td data-label={t('overview.created')}>{when(p.attributes.created_at)}</td>
              <td data-label={t('mail.app.lastUsed')}>{when(p.attributes.last_used_at)}</td>
              <td data-label={t('mail.actions')} class="row-actions">
                {confirming === p.id ? (
                  <span class="confirm">
                    <span>{t('mail.app.confirm', { device: p.attributes.device })}</span>
                    <button type="button" class="danger" id={`app-delete-yes-${p.id}`} onClick={() => remove(p.id)}>
                      {t('mail.delete.yes')}
                    </button>
                    <button type="button" class="secondary" onClick={() => (setConfirming(null), focusLater(`app-delete-${p.id}`))}>
                      {t('mail.cancel')}
                    </button>
                  </span>
                ) : (
                  <button
                    type="button"
                    class="danger"
                    id={`app-delete-${p.id}`}
                    aria-label={`${t('mail.delete')}: ${p.attributes.device} · ${p.attributes.application}`}
                    onClick={() => (setConfirming(p.id), focusLater(`app-delete-yes-${p.id}`))}
                  >
                    {t('mail.delete')}
                  </button>
                )}
                {rowErrors?.id === p.id && <FormErrors errors={rowErrors.errors} />}
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      <h3>{t('mail.app.create')}</h3>
      <form onSubmit={submit} noValidate class="app-form">
        <FormErrors errors={s.form} />
        <div class="grid">
          <TextField id="app-device" label={t('mail.app.device')} hint={t('mail.app.device.hint')} value={device} onInput={setDevice} errors={s.byField.device} required />
          <TextField id="app-application" label={t('mail.app.application')} hint={t('mail.app.application.hint')} value={application} onInput={setApplication} errors={s.byField.application} required />
        </div>
        <div class="actions">
          <button type="submit" disabled={s.busy}>
            {t('mail.app.submit')}
          </button>
        </div>
      </form>
    </>
  );
}
