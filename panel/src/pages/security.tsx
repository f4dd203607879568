// Two-factor login for the logged-in contact (API guide "Panel sessions (extension)"): POST
// /session/totp starts an enrolment (its otpauth URI as a QR code, its secret as text), POST
// /session/totp/confirm turns it on with a current code and answers the recovery codes — shown
// this once — and DELETE /session/totp turns it off with a code or a recovery code.
import { useState } from 'preact/hooks';
import { api, type Resource } from '../api/client';
import { currentSession } from '../api/session';
import { FormErrors } from '../components/errors';
import { TextField } from '../components/field';
import { PageHeading } from '../components/page-heading';
import { QrCode } from '../components/qr-code';
import { useLoad } from '../components/use-load';
import { useSubmit } from '../components/use-submit';
import { useI18n } from '../i18n';
import { apiErrors } from './page-errors';
import './account.css';

interface Enrolment {
  secret?: string;
  otpauth_uri?: string;
  enabled?: boolean;
  recovery_codes?: string[];
}

const codeBody = (code: string) => ({ data: { type: 'totp-enrolment', attributes: { code } } });
const focusLater = (id: string) => setTimeout(() => document.getElementById(id)?.focus(), 0);

export function SecurityPage() {
  const { t } = useI18n();
  // The session as it is now: two-factor login may have changed since the login.
  const [loaded, reload] = useLoad(currentSession, []);
  const [enrolment, setEnrolment] = useState<Enrolment | null>(null);
  const [recoveryCodes, setRecoveryCodes] = useState<string[] | null>(null);
  const [disabled, setDisabled] = useState(false);
  const [code, setCode] = useState('');
  const start = useSubmit([]);
  const confirm = useSubmit(['code'], () => 'totp-code');
  const disable = useSubmit(['code'], () => 'totp-off-code');

  const begin = () =>
    start.run(async () => {
      const { data } = await api<Resource<Enrolment>>('POST', '/session/totp');
      setEnrolment(data.attributes);
      setDisabled(false);
      setCode('');
      confirm.reset();
      focusLater('totp-scan');
    });
  const turnOn = async (e: Event) => {
    e.preventDefault();
    const ok = await confirm.run(async () => {
      const { data } = await api<Resource<Enrolment>>('POST', '/session/totp/confirm', { body: codeBody(code) });
      setRecoveryCodes(data.attributes.recovery_codes ?? []);
    });
    if (ok) {
      setEnrolment(null);
      setCode('');
      reload();
      focusLater('recovery-title');
    }
  };
  const turnOff = async (e: Event) => {
    e.preventDefault();
    const ok = await disable.run(() => api('DELETE', '/session/totp', { body: codeBody(code) }));
    if (ok) {
      setCode('');
      setRecoveryCodes(null);
      setDisabled(true);
      reload();
      focusLater('totp-title');
    }
  };

  let body;
  if (loaded.state === 'loading') body = <p role="status">{t('app.loading')}</p>;
  else if (loaded.state === 'error' || !loaded.data) body = <FormErrors errors={apiErrors(loaded.state === 'error' ? loaded.error : null)} />;
  else if (recoveryCodes) {
    body = (
      <div class="recovery">
        <h3 id="recovery-title" tabIndex={-1}>
          {t('security.totp.recovery')}
        </h3>
        <p class="notice">{t('security.totp.recovery.note')}</p>
        <ol class="recovery-codes">
          {recoveryCodes.map((c) => (
            <li key={c}>
              <code>{c}</code>
            </li>
          ))}
        </ol>
        <button type="button" onClick={() => (setRecoveryCodes(null), focusLater('totp-title'))}>
          {t('security.totp.recovery.done')}
        </button>
      </div>
    );
  } else if (loaded.data.totp_enabled) {
    body = (
      <>
        <p>{t('security.totp.on')}</p>
        <form onSubmit={turnOff} noValidate>
          <h3>{t('security.totp.disable')}</h3>
          <FormErrors errors={disable.form} />
          <TextField
            id="totp-off-code"
            label={t('security.totp.disable.code')}
            hint={t('security.totp.disable.hint')}
            autocomplete="one-time-code"
            required
            value={code}
            onInput={setCode}
            errors={disable.byField.code}
          />
          <button type="submit" class="danger" disabled={disable.busy}>
            {t('security.totp.disable')}
          </button>
        </form>
      </>
    );
  } else {
    body = (
      <>
        {disabled ? (
          <p class="notice" role="status">
            {t('security.totp.disabled')}
          </p>
        ) : (
          <p>{t('security.totp.off')}</p>
        )}
        <FormErrors errors={start.form} />
        {enrolment?.otpauth_uri && enrolment.secret ? (
          <div class="enrolment">
            <p id="totp-scan" tabIndex={-1}>
              {t('security.totp.scan')}
            </p>
            <QrCode id="totp-qr" text={enrolment.otpauth_uri} label={t('security.totp.qr')} />
            <p>
              {t('security.totp.secret')}: <code id="totp-secret">{enrolment.secret}</code>
            </p>
            <form onSubmit={turnOn} noValidate>
              <FormErrors errors={confirm.form} />
              <TextField
                id="totp-code"
                label={t('security.totp.code')}
                hint={t('security.totp.code.hint')}
                autocomplete="one-time-code"
                inputMode="numeric"
                required
                value={code}
                onInput={setCode}
                errors={confirm.byField.code}
              />
              <div class="actions">
                <button type="submit" disabled={confirm.busy}>
                  {t('security.totp.confirm')}
                </button>
                <button type="button" class="secondary" onClick={begin} disabled={start.busy}>
                  {t('security.totp.restart')}
                </button>
              </div>
            </form>
          </div>
        ) : (
          <button type="button" onClick={begin} disabled={start.busy}>
            {t('security.totp.start')}
          </button>
        )}
      </>
    );
  }

  return (
    <section>
      <PageHeading title={t('security.title')} />
      <h2 id="totp-title" tabIndex={-1}>
        {t('security.totp')}
      </h2>
      {body}
    </section>
  );
}
