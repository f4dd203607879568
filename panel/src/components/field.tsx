// A labelled form field with its hint and the API's errors for it (by source.pointer), tied
// together with aria-describedby so a screen reader reads them with the field.
import type { ComponentChildren } from 'preact';
import type { ApiErrorObject } from '../api/client';
import { useI18n } from '../i18n';
import { errorMessage } from './errors';

interface Common {
  id: string;
  label: string;
  hint?: string;
  errors?: ApiErrorObject[];
  value: string;
  onInput(value: string): void;
  required?: boolean;
}

export function describedBy(id: string, hint?: string, errors?: ApiErrorObject[]) {
  return [hint ? `${id}-hint` : '', errors?.length ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
}

export function Frame(props: Common & { children: ComponentChildren }) {
  return (
    <div class={props.errors?.length ? 'field invalid' : 'field'}>
      <label for={props.id}>{props.label}</label>
      {props.children}
      <FieldNotes id={props.id} hint={props.hint} errors={props.errors} />
    </div>
  );
}

/** A field's hint and the API's errors for it, with the ids `describedBy` names. */
export function FieldNotes(props: { id: string; hint?: string; errors?: ApiErrorObject[] }) {
  const { t } = useI18n();
  return (
    <>
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
    </>
  );
}

export function TextField(
  props: Common & { type?: 'text' | 'email' | 'password' | 'number' | 'datetime-local'; autocomplete?: string; inputMode?: 'numeric' | 'text'; min?: number; max?: number },
) {
  return (
    <Frame {...props}>
      <input
        id={props.id}
        name={props.id}
        type={props.type ?? 'text'}
        value={props.value}
        onInput={(e) => props.onInput((e.currentTarget as HTMLInputElement).value)}
        autocomplete={props.autocomplete}
        inputMode={props.inputMode}
        min={props.min}
        max={props.max}
        required={props.required}
        aria-invalid={props.errors?.length ? 'true' : undefined}
        aria-describedby={describedBy(props.id, props.hint, props.errors)}
      />
    </Frame>
  );
}

export function SelectField(props: Common & { options: { value: string; label: string }[] }) {
  return (
    <Frame {...props}>
      <select
        id={props.id}
        name={props.id}
        value={props.value}
        onChange={(e) => props.onInput((e.currentTarget as HTMLSelectElement).value)}
        aria-invalid={props.errors?.length ? 'true' : undefined}
        aria-describedby={describedBy(props.id, props.hint, props.errors)}
      >
        {props.options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </Frame>
  );
}
