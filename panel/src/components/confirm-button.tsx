// A destructive button that asks once more in place ("Delete X?" Yes / Cancel), moving the focus to
// the question's answer and back, so a keyboard user never loses their place.
import { useState } from 'preact/hooks';
import { useI18n, type MessageKey } from '../i18n';

export function ConfirmButton(props: {
  id: string;
  label: string;
  /** The accessible name: the visible label and what it acts on. */
  ariaLabel: string;
  question: string;
  yes: string;
  cancel?: MessageKey;
  disabled?: boolean;
  onConfirm(): void;
}) {
  const { t } = useI18n();
  const [asking, setAsking] = useState(false);
  const focusLater = (id: string) => setTimeout(() => document.getElementById(id)?.focus(), 0);
  if (!asking) {
    return (
      <button type="button" class="danger" id={props.id} aria-label={props.ariaLabel} disabled={props.disabled} onClick={() => (setAsking(true), focusLater(`${props.id}-yes`))}>
        {props.label}
      </button>
    );
  }
  return (
    <span class="confirm">
      <span>{props.question}</span>
      <button type="button" class="danger" id={`${props.id}-yes`} onClick={() => (setAsking(false), props.onConfirm())}>
        {props.yes}
      </button>
      <button type="button" class="secondary" onClick={() => (setAsking(false), focusLater(props.id))}>
        {t(props.cancel ?? 'dns.cancel')}
      </button>
    </span>
  );
}
