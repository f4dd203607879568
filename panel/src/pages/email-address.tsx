// One e-mail address (API guide "E-mail addresses"): its facts, description and antispam mode,
// forward targets added and removed one at a time, and for a mailbox its password, autoresponder
// and application passwords. An address that is not the user's answers 404: "not found".
import { useState } from 'preact/hooks';
import { ApiError } from '../api/client';
import { FormErrors } from '../components/errors';
import { TextField } from '../components/field';
import { Link } from '../components/link';
import { PageHeading } from '../components/page-heading';
import { Saving } from '../components/saving';
import { useLoad } from '../components/use-load';
import { useSubmit } from '../components/use-submit';
import { formatDate, useI18n } from '../i18n';
import { AppPasswordsSection } from './email-app-passwords';
import { AntispamField } from './antispam-field';
import { addTarget, getAddress, patchAddress, removeTarget, type EmailAddress } from './email-api';
import { AutoresponderSection } from './email-autoresponder';
import { PasswordSection } from './email-password';
import { NotFoundPage } from './not-found';
import { apiErrors } from './page-errors';

export function EmailAddressPage(props: { id: string }) {
  const { t, lang } = useI18n();
  const [loaded, reload] = useLoad(() => getAddress(props.id), [props.id]);
  if (loaded.state === 'error' && loaded.error instanceof ApiError && loaded.error.status === 404) return <NotFoundPage />;
  if (loaded.state !== 'ready') {
    return (
      <section>
        <PageHeading title={t('mail.title')} />
        {loaded.state === 'loading' ? <p role="status">{t('app.loading')}</p> : <FormErrors errors={apiErrors(loaded.error)} />}
      </section>
    );
  }
  const a = loaded.data;
  const { quota } = a.attributes;
  const mailbox = a.attributes.address_type === 'mailbox';
  const mb = (bytes: number) => t('overview.mb', { n: Math.round(bytes / 1048576).toLocaleString(lang) });
  return (
    <section>
      <p class="crumbs">
        <Link to={{ page: 'email' }}>{t('mail.back')}</Link>
      </p>
      <PageHeading title={a.attributes.address} />
      <dl class="facts address-facts">
        <dt>{t('mail.type')}</dt>
        <dd>{t(`mail.type.${a.attributes.address_type}`)}</dd>
        {quota && (
          <>
            <dt>{t('mail.quota')}</dt>
            <dd>{quota.used_bytes === null ? t('mail.quota.notMeasured', { limit: mb(quota.limit_bytes) }) : t('overview.ofMax', { used: mb(quota.used_bytes), max: mb(quota.limit_bytes) })}</dd>
          </>
        )}
        <dt>{t('overview.created')}</dt>
        <dd>{formatDate(lang, a.attributes.created_at)}</dd>
        {mailbox && (
          <>
            <dt>{t('mail.userName')}</dt>
            <dd>
              <code>{a.attributes.address_ace}</code> <span class="hint">{t('mail.userName.hint')}</span>
            </dd>
          </>
        )}
      </dl>
      <SettingsSection address={a} onSaved={reload} />
      <ForwardingSection address={a} onChanged={reload} />
      {mailbox && (
        <>
          <PasswordSection address={a} />
          <AutoresponderSection address={a} onSaved={reload} />
          <AppPasswordsSection address={a} />
        </>
      )}
    </section>
  );
}

function SettingsSection(props: { address: EmailAddress; onSaved(): void }) {
  const { t } = useI18n();
  const a = props.address.attributes;
  const [description, setDescription] = useState(a.description ?? '');
  const [antispam, setAntispam] = useState(a.antispam);
  const s = useSubmit(['description', 'antispam'], (f) => `settings-${f}`);
  const submit = async (e: Event) => {
    e.preventDefault();
    // `null` clears the description (API guide "E-mail addresses").
    // The mode only when it changed: a change to or from `reject` waits for the spam filter.
    const attributes = { description: description.trim() ? description : null, ...(antispam === a.antispam ? {} : { antispam }) };
    if (await s.run(() => patchAddress(props.address.id, attributes))) props.onSaved();
  };
  return (
    <>
      <h2>{t('mail.settings')}</h2>
      <form onSubmit={submit} noValidate class="settings-form">
        <FormErrors errors={s.form} />
        <TextField id="settings-description" label={t('mail.description')} value={description} onInput={setDescription} errors={s.byField.description} />
        <AntispamField id="settings-antispam" value={antispam} onInput={setAntispam} errors={s.byField.antispam} />
        <div class="actions">
          <button type="submit" disabled={s.busy}>
            {t('mail.save')}
          </button>
          <Saving busy={s.busy} done={s.done} />
        </div>
      </form>
    </>
  );
}

function ForwardingSection(props: { address: EmailAddress; onChanged(): void }) {
  const { t } = useI18n();
  const { id, attributes: a } = props.address;
  const [target, setTarget] = useState('');
  // The target is a path parameter: its errors name no field of a body, so all of them go to the field.
  const add = useSubmit([], () => 'forward-target');
  const [removeErrors, setRemoveErrors] = useState<{ target: string; errors: ReturnType<typeof apiErrors> } | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    if (await add.run(() => addTarget(id, target.trim()))) {
      setTarget('');
      props.onChanged();
    } else document.getElementById('forward-target')?.focus();
  };
  const remove = async (to: string) => {
    setRemoveErrors(null);
    try {
      await removeTarget(id, to);
      props.onChanged();
      document.getElementById('forward-target')?.focus();
    } catch (err) {
      setRemoveErrors({ target: to, errors: apiErrors(err) });
    }
  };
  return (
    <>
      <h2>{t('mail.forwarding')}</h2>
      <p class="hint">{t(a.address_type === 'mailbox' ? 'mail.forwardTo.hint.mailbox' : 'mail.forwarding.hint.forward')}</p>
      {a.forward_to.length ? (
        <ul class="targets">
          {a.forward_to.map((to) => (
            <li key={to} data-target={to}>
              <code>{to}</code>{' '}
              <button type="button" class="danger" onClick={() => remove(to)} aria-label={t('mail.forwarding.remove', { target: to })}>
                {t('mail.remove')}
              </button>
              {removeErrors?.target === to && <FormErrors errors={removeErrors.errors} />}
            </li>
          ))}
        </ul>
      ) : (
        <p>{t('mail.forwarding.none')}</p>
      )}
      <form onSubmit={submit} noValidate class="inline-form">
        <TextField id="forward-target" type="email" label={t('mail.forwarding.add')} value={target} onInput={setTarget} errors={add.form} required />
        <div class="actions">
          <button type="submit" disabled={add.busy}>
            {t('mail.forwarding.submit')}
          </button>
        </div>
      </form>
    </>
  );
}
