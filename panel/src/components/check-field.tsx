// A labelled checkbox with its hint and the API's errors for it (by source.pointer), as field.tsx
// does for text fields and selects.
import type { ApiErrorObject } from '../api/client';
import { useI18n } from '../i18n';
import { errorMessage } from './errors';

export function CheckField(props: { id: string; label: string; hint?: string; errors?: ApiErrorObject[]; checked: boolean; onChange(checked: boolean): void }) {
  const { t } = useI18n();
  const described = [props.hint ? `${props.id}-hint` : '', props.errors?.length ? `${props.id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div class={props.errors?.length ? 'field check invalid' : 'field check'}>
      <div class="check-row">
        <input
          id={props.id}
          name={props.id}
          type="checkbox"
          checked={props.checked}
          onChange={(e) => props.onChange((e.currentTarget as HTMLInputElement).checked)}
          aria-invalid={props.errors?.length ? 'true' : undefined}
          aria-describedby={described}
        />
        <label for={props.id}>{props.label}</label>
      </div>
      {props.hint && (
        <p class="hint" id={`${props.id}-hint`}>
          {props.hint}
        </p>
      )}
      {props.errors?.length ? (
        <p class="field-error" id={`${props.id}-error`}>
          {props.errors.map((e) => errorMessage(t, e)).join(' ')}
        </p>
      ) : null}
    </div>
  );
}
