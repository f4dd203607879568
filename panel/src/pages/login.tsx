// Login as the portal user: e-mail and portal password, then the TOTP code when the API answers
// totp_required (API guide "Beyond the original API").
import { useEffect, useState } from 'preact/hooks';
import { ApiError, errorsByField, type ApiErrorObject } from '../api/client';
import { logIn, type Session } from '../api/session';
import { FormErrors } from '../components/errors';
import { TextField } from '../components/field';
import { PageHeading } from '../components/page-heading';
import { useI18n, type MessageKey } from '../i18n';

const FIELDS = ['email', 'password', 'totp_code'] as const;

export function LoginPage(props: { notice: MessageKey | null; onLoggedIn(session: Session): void }) {
  const { t } = useI18n();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [step, setStep] = useState<'password' | 'totp'>('password');
  const [busy, setBusy] = useState(false);
  const [fieldErrors, setFieldErrors] = useState<Record<string, ApiErrorObject[]>>({});
  const [formErrors, setFormErrors] = useState<ApiErrorObject[]>([]);

  // The code field replaces the password fields: the focus goes to it, not back to the page's top.
  useEffect(() => {
    if (step === 'totp') document.getElementById('totp_code')?.focus();
  }, [step]);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    try {
      props.onLoggedIn(await logIn(email, password, step === 'totp' ? code : undefined));
    } catch (err) {
      if (err instanceof ApiError && err.has('totp_required') && step === 'password') {
        setStep('totp');
        setFieldErrors({});
        setFormErrors([]);
      } else {
        const { byField, form } = errorsByField(err, FIELDS);
        setFieldErrors(byField);
        setFormErrors(form);
      }
    } finally {
      setBusy(false);
    }
  };

  const restart = () => {
    setStep('password');
    setCode('');
    setPassword('');
    setFormErrors([]);
    setFieldErrors({});
  };

  return (
    <section class="login">
      <PageHeading title={t('login.title')} />
      {props.notice && (
        <p class="notice" role="status">
          {t(props.notice)}
        </p>
      )}
      <form onSubmit={submit} noValidate aria-describedby="login-intro">
        <p id="login-intro">{step === 'password' ? t('login.intro') : t('login.totp.intro')}</p>
        <FormErrors errors={formErrors} />
        {step === 'password' ? (
          <>
            <TextField id="email" type="email" label={t('login.email')} autocomplete="username" required value={email} onInput={setEmail} errors={fieldErrors.email} />
            <TextField id="password" type="password" label={t('login.password')} autocomplete="current-password" required value={password} onInput={setPassword} errors={fieldErrors.password} />
          </>
        ) : (
          <TextField
            id="totp_code"
            label={t('login.totp')}
            hint={t('login.totp.hint')}
            autocomplete="one-time-code"
            inputMode="numeric"
            required
            value={code}
            onInput={setCode}
            errors={fieldErrors.totp_code}
          />
        )}
        <div class="actions">
          <button type="submit" disabled={busy}>
            {step === 'password' ? t('login.submit') : t('login.continue')}
          </button>
          {step === 'totp' && (
            <button type="button" class="secondary" onClick={restart}>
              {t('login.back')}
            </button>
          )}
        </div>
      </form>
    </section>
  );
}
