// A field for a password of one's own with the API guide's "Password rules" as a checklist that
// follows the typing (password-hints.ts): a hint only. The API decides; its refusal appears under
// the field like any error of the field.
import { useState } from 'preact/hooks';
import type { ApiErrorObject } from '../api/client';
import { useI18n, type MessageKey } from '../i18n';
import { describedBy, Frame } from './field';
import { API_RULES, LIVE_RULES, passwordHints } from './password-hints';

export function NewPasswordField(props: { id: string; label: string; address: string; value: string; onInput(value: string): void; errors?: ApiErrorObject[] }) {
  const { t } = useI18n();
  const [shown, setShown] = useState(false);
  const { id, value } = props;
  const hints = passwordHints(value, props.address);
  const met = LIVE_RULES.filter((r) => hints[r]).length;
  const state = (ok: boolean) => (value === '' ? 'empty' : ok ? 'met' : 'unmet');
  return (
    <div class="password-field">
      <Frame {...props}>
        <span class="with-button">
          <input
            id={id}
            name={id}
            type={shown ? 'text' : 'password'}
            autocomplete="new-password"
            value={value}
            onInput={(e) => props.onInput((e.currentTarget as HTMLInputElement).value)}
            aria-invalid={props.errors?.length ? 'true' : undefined}
            aria-describedby={[describedBy(id, undefined, props.errors), `${id}-summary`].filter(Boolean).join(' ')}
          />
          <button type="button" class="secondary" aria-pressed={shown} aria-controls={id} onClick={() => setShown(!shown)}>
            {t('mail.password.show')}
          </button>
        </span>
      </Frame>
      <div class="rules" data-rules-for={id}>
        <p class="hint" id={`${id}-summary`}>
          {value === '' ? t('mail.rules.intro') : t('mail.rules.summary', { met, all: LIVE_RULES.length })}
        </p>
        <ul class="checklist">
          {LIVE_RULES.map((r) => (
            <li key={r} data-rule={r} data-state={state(hints[r])}>
              <span aria-hidden="true" class="mark">
                {value === '' ? '○' : hints[r] ? '✓' : '✗'}
              </span>{' '}
              {t(`mail.rule.${r}` as MessageKey)}
              {value !== '' && <span class="visually-hidden"> ({hints[r] ? t('mail.rule.met') : t('mail.rule.unmet')})</span>}
            </li>
          ))}
          {API_RULES.map((r) => (
            <li key={r} data-rule={r} data-state="api">
              <span aria-hidden="true" class="mark">
                ·
              </span>{' '}
              {t(`mail.rule.${r}` as MessageKey)} <span class="api-checks">{t('mail.rule.onSave')}</span>
            </li>
          ))}
        </ul>
      </div>
    </div>
  );
}
