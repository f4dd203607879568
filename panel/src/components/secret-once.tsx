// A secret the API shows once (a generated password, an application password): shown with what it
// is for, a warning that it is never shown again, and a button that hides it for good. The focus
// moves to it, so a screen-reader user hears it at once.
import { useEffect, useRef } from 'preact/hooks';
import { useI18n } from '../i18n';

export function SecretOnce(props: { title: string; secret: string; onDismiss(): void }) {
  const { t } = useI18n();
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => ref.current?.focus(), [props.secret]);
  return (
    <div class="secret" role="region" aria-label={props.title} tabIndex={-1} ref={ref} data-secret>
      <p class="secret-title">{props.title}</p>
      <p>
        <code class="secret-value">{props.secret}</code>
      </p>
      <p class="hint">{t('secret.once')}</p>
      <button type="button" class="secondary" onClick={props.onDismiss}>
        {t('secret.dismiss')}
      </button>
    </div>
  );
}
