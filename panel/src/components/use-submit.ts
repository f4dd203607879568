// One form's sending: busy while the request runs, the API's errors by the field their
// source.pointer names (a nested pointer such as /data/attributes/forward_to/2 at its top field
// `forward_to` unless the form names it), the first field at fault focused, and `done` after a
// success until the next input.
import { useState } from 'preact/hooks';
import { errorsByField, type ApiErrorObject } from '../api/client';

export interface Submit {
  busy: boolean;
  done: boolean;
  byField: Record<string, ApiErrorObject[]>;
  form: ApiErrorObject[];
  /** Runs `action`; true when it succeeded. */
  run(action: () => Promise<unknown>): Promise<boolean>;
  /** A form's onSubmit that runs `action` (`onSubmit={submitWith(async () => …)}`). */
  submitWith(action: () => Promise<unknown>): (e: Event) => Promise<void>;
  reset(): void;
}

/** `useSubmit(['description', 'antispam'], (f) => 'settings-' + f)`: the element id of each field, for the focus. */
export function useSubmit(fields: readonly string[], idOf: (field: string) => string = (f) => f): Submit {
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState(false);
  const [errors, setErrors] = useState<{ byField: Record<string, ApiErrorObject[]>; form: ApiErrorObject[] }>({ byField: {}, form: [] });
  const reset = () => (setErrors({ byField: {}, form: [] }), setDone(false));
  const run = async (action: () => Promise<unknown>) => {
    setBusy(true);
    setDone(false);
    try {
      await action();
      setErrors({ byField: {}, form: [] });
      setDone(true);
      return true;
    } catch (err) {
      const { byField, form } = errorsByField(err, fields);
      const rest: ApiErrorObject[] = [];
      // An error of an entry of a list field (/data/attributes/events/1), or of a path or query
      // parameter the form has a field for (source.parameter), goes to that field too.
      for (const e of form) {
        const top = /^\/data\/attributes\/([^/]+)\//.exec(e.source?.pointer ?? '')?.[1];
        const field = [top, e.source?.parameter].find((n) => n && fields.includes(n));
        if (field) (byField[field] ??= []).push(e);
        else rest.push(e);
      }
      setErrors({ byField, form: rest });
      const first = fields.find((f) => byField[f]);
      if (first) document.getElementById(idOf(first))?.focus();
      return false;
    } finally {
      setBusy(false);
    }
  };
  const submitWith = (action: () => Promise<unknown>) => async (e: Event) => {
    e.preventDefault();
    await run(action);
  };
  return { busy, done, byField: errors.byField, form: errors.form, run, submitWith, reset };
}
