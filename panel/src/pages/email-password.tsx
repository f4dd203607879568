// A mailbox's password (API guide "E-mail addresses", "Password rules"): a new generated one,
// shown once, or one of the user's own with the rules as a live checklist; either works at once
// and the old one stops working.
import { useState } from 'preact/hooks';
import { FormErrors } from '../components/errors';
import { NewPasswordField } from '../components/password-field';
import { Saving } from '../components/saving';
import { OneTimeSecret } from '../components/one-time-secret';
import { useSubmit } from '../components/use-submit';
import { useI18n } from '../i18n';
import { newGeneratedPassword, patchAddress, type EmailAddress } from './email-api';

export function PasswordSection(props: { address: EmailAddress }) {
  const { t } = useI18n();
  const { id, attributes: a } = props.address;
  const [secret, setSecret] = useState<string | null>(null);
  const [password, setPassword] = useState('');
  const generate = useSubmit([], () => 'password-generate');
  const own = useSubmit(['password'], () => 'own-password');

  const newOne = () =>
    generate.run(async () => {
      own.reset();
      setSecret((await newGeneratedPassword(id)).attributes.password ?? null);
    });
  const submit = async (e: Event) => {
    e.preventDefault();
    setSecret(null);
    generate.reset();
    if (await own.run(() => patchAddress(id, { password }))) setPassword('');
  };

  return (
    <>
      <h2>{t('mail.password')}</h2>
      <p class="hint">{t('mail.password.intro')}</p>
      {secret && <OneTimeSecret id="shown-password" title={t('mail.secret.title', { address: a.address })} secret={secret} onDismiss={() => setSecret(null)} />}
      <FormErrors errors={generate.form} />
      <div class="actions">
        <button type="button" class="secondary" id="password-generate" disabled={generate.busy} onClick={newOne}>
          {t('mail.password.generateNew')}
        </button>
      </div>
      <h3>{t('mail.password.own')}</h3>
      <form onSubmit={submit} noValidate class="password-form">
        <FormErrors errors={own.form} />
        <NewPasswordField id="own-password" label={t('mail.password.new')} address={a.address_ace} value={password} onInput={setPassword} errors={own.byField.password} />
        <div class="actions">
          <button type="submit" disabled={own.busy}>
            {t('mail.password.set')}
          </button>
          <Saving busy={own.busy} done={own.done} />
        </div>
      </form>
    </>
  );
}
