// A password the API shows once (a new database's or mailbox's, a new one for either, an application
// password): a read-only field that selects itself, a copy button, and the plain warning that it
// will not be shown again. It takes the focus when it appears.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { useI18n } from '../i18n';

export function OneTimeSecret(props: { id: string; title: string; secret: string; children?: ComponentChildren; onDismiss(): void }) {
  const { t } = useI18n();
  const [copied, setCopied] = useState<'no' | 'yes' | 'failed'>('no');
  const field = useRef<HTMLInputElement>(null);
  useEffect(() => {
    field.current?.focus();
    field.current?.select();
  }, [props.secret]);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.secret);
      setCopied('yes');
    } catch {
      field.current?.select();
      setCopied('failed');
    }
  };
  return (
    <section class="secret" aria-labelledby={`${props.id}-title`} data-secret>
      <h2 id={`${props.id}-title`} class="h3">
        {props.title}
      </h2>
      <p class="secret-once">{t('secret.once')}</p>
      {props.children}
      <div class="field">
        <label for={props.id}>{t('secret.password')}</label>
        <input
          id={props.id}
          ref={field}
          class="secret-value"
          type="text"
          readOnly
          value={props.secret}
          autocomplete="off"
          spellcheck={false}
          onFocus={(e) => (e.currentTarget as HTMLInputElement).select()}
        />
      </div>
      <div class="actions">
        <button type="button" onClick={copy}>
          {t('secret.copy')}
        </button>
        <button type="button" class="secondary" onClick={props.onDismiss}>
          {t('secret.dismiss')}
        </button>
      </div>
      <p role="status" class="hint">
        {copied === 'yes' ? t('secret.copied') : copied === 'failed' ? t('secret.copyFailed') : ''}
      </p>
    </section>
  );
}
