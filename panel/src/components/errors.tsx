// The API's errors in the user's words: the message for the error id in the user's language, then
// the API's own detail, which names the rule that was broken.
import type { ApiErrorObject } from '../api/client';
import { hasKey, useI18n, type T } from '../i18n';

export function errorMessage(t: T, e: ApiErrorObject): string {
  const key = `error.${e.id}`;
  const base = hasKey(key) ? t(key) : t('error.generic', { status: e.status });
  return e.detail ? `${base} ${t('error.detail', { detail: e.detail })}` : base;
}

/** Errors that belong to no field: announced at once (role="alert"). */
export function FormErrors(props: { errors: ApiErrorObject[]; id?: string }) {
  const { t } = useI18n();
  if (!props.errors.length) return null;
  return (
    <div class="alert" role="alert" id={props.id}>
      {props.errors.length === 1 ? (
        <p>{errorMessage(t, props.errors[0])}</p>
      ) : (
        <ul>
          {props.errors.map((e, i) => (
            <li key={i}>{errorMessage(t, e)}</li>
          ))}
        </ul>
      )}
    </div>
  );
}
