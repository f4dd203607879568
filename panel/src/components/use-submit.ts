// A form's request to the API: busy while it runs, then the API's errors at the fields their
// source.pointer names (the first such field takes the focus, so its error is read out with it)
// and the rest above the form. The account pages share it rather than repeat it.
import { useState } from 'preact/hooks';
import { errorsByField, type ApiErrorObject } from '../api/client';

export interface Submit {
  busy: boolean;
  fieldErrors: Record<string, ApiErrorObject[]>;
  formErrors: ApiErrorObject[];
  /** Runs `request`; true when it succeeded, false when its errors are now shown. */
  run(request: () => Promise<unknown>): Promise<boolean>;
  clear(): void;
}

/** `fields`: the attribute names the form has; `idOf(field)`: the id of its input. */
export function useSubmit(fields: readonly string[], idOf: (field: string) => string = (f) => f): Submit {
  const [busy, setBusy] = useState(false);
  const [fieldErrors, setFieldErrors] = useState<Record<string, ApiErrorObject[]>>({});
  const [formErrors, setFormErrors] = useState<ApiErrorObject[]>([]);
  const clear = () => {
    setFieldErrors({});
    setFormErrors([]);
  };
  const run = async (request: () => Promise<unknown>) => {
    setBusy(true);
    try {
      await request();
      clear();
      return true;
    } catch (err) {
      const { byField, form: rest } = errorsByField(err, fields);
      // An error of a path or query parameter the form has a field for (source.parameter), or of an
      // entry of a list field (/data/attributes/events/1), goes to that field too.
      const form = rest.filter((e) => {
        const nested = /^\/data\/attributes\/([^/]+)\//.exec(e.source?.pointer ?? '')?.[1];
        const f = [e.source?.parameter, nested].find((n) => n && fields.includes(n));
        if (!f) return true;
        (byField[f] ??= []).push(e);
        return false;
      });
      setFieldErrors(byField);
      setFormErrors(form);
      const first = fields.find((f) => byField[f]);
      if (first) setTimeout(() => document.getElementById(idOf(first))?.focus(), 0);
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, fieldErrors, formErrors, run, clear };
}
