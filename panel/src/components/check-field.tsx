// A labelled checkbox with its hint and the API's errors for it (by source.pointer), as field.tsx
// does for text fields and selects.
import type { ApiErrorObject } from '../api/client';
import { describedBy, FieldNotes } from './field';

export function CheckField(props: { id: string; label: string; hint?: string; errors?: ApiErrorObject[]; checked: boolean; onChange(checked: boolean): void }) {
  const described = describedBy(props.id, props.hint, props.errors);
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
      <FieldNotes id={props.id} hint={props.hint} errors={props.errors} />
    </div>
  );
}
