// The form of a DNS record, for adding one and for editing one (API guide "DNS records"). Hints
// only (types, the TTL range, an example per type); the API checks every rule and its errors
// appear at the field their source.pointer names.
import { useState } from 'preact/hooks';
import { errorsByField, type ApiErrorObject } from '../api/client';
import { FormErrors } from '../components/errors';
import { SelectField, TextField } from '../components/field';
import { useI18n, type MessageKey } from '../i18n';

export const RECORD_TYPES = ['A', 'AAAA', 'CNAME', 'MX', 'TXT', 'SRV', 'CAA', 'NS', 'DS', 'TLSA'] as const;
const FIELDS = ['record_type', 'name', 'data', 'ttl'] as const;

export interface RecordInput {
  record_type: string;
  name: string;
  data: string;
  ttl: string;
}

/** The POST /dns-records attributes of a form's values; an empty TTL means the server's default. */
export function recordAttributes(domain: string, v: RecordInput) {
  const ttl = v.ttl.trim();
  // A TTL that is no number still goes to the API as typed, so that its error names the field.
  return { record_type: v.record_type, name: v.name, domain, data: v.data, ttl: ttl === '' ? null : /^\d+$/.test(ttl) ? Number(ttl) : ttl };
}

export function RecordForm(props: {
  idPrefix: string;
  domain: string;
  initial: RecordInput;
  submitLabel: string;
  note?: string;
  /** Resolves when the API accepted the change; rejects with its ApiError. */
  onSubmit(values: RecordInput): Promise<void>;
  onCancel?(): void;
  resetAfter?: boolean;
}) {
  const { t } = useI18n();
  const [values, setValues] = useState<RecordInput>(props.initial);
  const [busy, setBusy] = useState(false);
  const [fieldErrors, setFieldErrors] = useState<Record<string, ApiErrorObject[]>>({});
  const [formErrors, setFormErrors] = useState<ApiErrorObject[]>([]);
  const set = (key: keyof RecordInput) => (value: string) => setValues((v) => ({ ...v, [key]: value }));
  const id = (field: string) => `${props.idPrefix}-${field}`;

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    try {
      await props.onSubmit(values);
      setFieldErrors({});
      setFormErrors([]);
      if (props.resetAfter) setValues((v) => ({ ...props.initial, record_type: v.record_type }));
    } catch (err) {
      const { byField, form } = errorsByField(err, FIELDS);
      setFieldErrors(byField);
      setFormErrors(form);
      // The first field at fault takes the focus, so its error is read out with it.
      const first = FIELDS.find((f) => byField[f]);
      if (first) document.getElementById(id(first))?.focus();
    } finally {
      setBusy(false);
    }
  };

  return (
    <form onSubmit={submit} noValidate class="record-form">
      {props.note && <p class="hint">{props.note}</p>}
      <FormErrors errors={formErrors} />
      <div class="grid">
        <SelectField
          id={id('record_type')}
          label={t('dns.type')}
          value={values.record_type}
          onInput={set('record_type')}
          options={RECORD_TYPES.map((r) => ({ value: r, label: r }))}
          errors={fieldErrors.record_type}
        />
        <TextField id={id('name')} label={t('dns.name')} hint={t('dns.name.hint', { domain: props.domain })} value={values.name} onInput={set('name')} errors={fieldErrors.name} />
        <TextField
          id={id('data')}
          label={t('dns.data')}
          hint={t(`dns.data.hint.${values.record_type}` as MessageKey)}
          value={values.data}
          onInput={set('data')}
          errors={fieldErrors.data}
          required
        />
        <TextField id={id('ttl')} label={t('dns.ttl')} hint={t('dns.ttl.hint')} type="number" inputMode="numeric" min={300} max={86400} value={values.ttl} onInput={set('ttl')} errors={fieldErrors.ttl} />
      </div>
      <div class="actions">
        <button type="submit" disabled={busy}>
          {props.submitLabel}
        </button>
        {props.onCancel && (
          <button type="button" class="secondary" onClick={props.onCancel}>
            {t('dns.cancel')}
          </button>
        )}
      </div>
    </form>
  );
}
