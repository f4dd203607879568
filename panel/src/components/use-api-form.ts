// A form that sends one API request: busy while it runs, then the API's errors at the fields their
// source.pointer names (the rest above the form), the first field at fault focused so its error is
// read out with it. `onSubmit={submitWith(async () => …)}`.
import { useState } from 'preact/hooks';
import { errorsByField, type ApiErrorObject } from '../api/client';

export function useApiForm<F extends string>(fields: readonly F[], idOf: (field: F) => string) {
  const [busy, setBusy] = useState(false);
  const [fieldErrors, setFieldErrors] = useState<Partial<Record<F, ApiErrorObject[]>>>({});
  const [formErrors, setFormErrors] = useState<ApiErrorObject[]>([]);
  const submitWith = (send: () => Promise<void>) => async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    try {
      await send();
      setFieldErrors({});
      setFormErrors([]);
    } catch (err) {
      const { byField, form } = errorsByField(err, fields);
      setFieldErrors(byField as Partial<Record<F, ApiErrorObject[]>>);
      setFormErrors(form);
      const first = fields.find((f) => byField[f]);
      if (first) document.getElementById(idOf(first))?.focus();
    } finally {
      setBusy(false);
    }
  };
  return { busy, fieldErrors, formErrors, submitWith };
}
