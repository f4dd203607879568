// A button whose action needs a second, explicit step: the question, "yes" (focused) and "cancel"
// (back to the button). For deleting and for replacing a password.
import { useState } from 'preact/hooks';
import type { ApiErrorObject } from '../api/client';
import { apiErrors } from '../pages/page-errors';
import { FormErrors } from './errors';

export function ConfirmButton(props: {
  id: string;
  label: string;
  /** The accessible name when `label` alone is ambiguous (e.g. "Delete: subdomain blog"). */
  ariaLabel?: string;
  question: string;
  yes: string;
  cancel: string;
  class?: string;
  /** Rejects with the API's error, shown here. */
  onConfirm(): Promise<void> | void;
}) {
  const [asking, setAsking] = useState(false);
  const [errors, setErrors] = useState<ApiErrorObject[]>([]);
  const focusLater = (id: string) => setTimeout(() => document.getElementById(id)?.focus(), 0);
  const confirm = async () => {
    setAsking(false);
    setErrors([]);
    try {
      await props.onConfirm();
    } catch (err) {
      setErrors(apiErrors(err));
      focusLater(props.id);
    }
  };
  return (
    <>
      {asking ? (
        <span class="confirm">
          <span id={`${props.id}-question`}>{props.question}</span>
          {/* The question is read out with the button that takes the focus. */}
          <button type="button" class="danger" id={`${props.id}-yes`} aria-describedby={`${props.id}-question`} onClick={confirm}>
            {props.yes}
          </button>
          <button type="button" class="secondary" onClick={() => (setAsking(false), focusLater(props.id))}>
            {props.cancel}
          </button>
        </span>
      ) : (
        <button type="button" class={props.class ?? 'danger'} id={props.id} aria-label={props.ariaLabel} onClick={() => (setAsking(true), focusLater(`${props.id}-yes`))}>
          {props.label}
        </button>
      )}
      <FormErrors errors={errors} />
    </>
  );
}
