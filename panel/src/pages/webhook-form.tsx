// The form of a webhook, for adding one and for changing one (API guide "Webhooks"): URL, events
// (written comma-separated, sent as the list the API wants), description. The API judges each;
// an error of one event (/data/attributes/events/1) appears at the events field.
import { useState } from 'preact/hooks';
import { FormErrors } from '../components/errors';
import { TextField } from '../components/field';
import { useSubmit } from '../components/use-submit';
import { useI18n } from '../i18n';

export interface WebhookInput {
  url: string;
  events: string;
  description: string;
}

const FIELDS = ['url', 'events', 'description'] as const;

/** The attributes of a form's values: events split at commas and white space. */
export const webhookAttributes = (v: WebhookInput) => ({ url: v.url.trim(), events: v.events.split(/[\s,]+/).filter(Boolean), description: v.description });

export function WebhookForm(props: { idPrefix: string; initial: WebhookInput; submitLabel: string; onSubmit(v: WebhookInput): Promise<unknown>; onCancel?(): void; resetAfter?: boolean }) {
  const { t } = useI18n();
  const [values, setValues] = useState(props.initial);
  const id = (f: string) => `${props.idPrefix}-${f}`;
  const save = useSubmit(FIELDS, id);
  const set = (key: keyof WebhookInput) => (value: string) => setValues((v) => ({ ...v, [key]: value }));
  const submit = async (e: Event) => {
    e.preventDefault();
    if ((await save.run(() => props.onSubmit(values))) && props.resetAfter) setValues(props.initial);
  };
  return (
    <form onSubmit={submit} noValidate class="narrow webhook-form">
      <FormErrors errors={save.form} />
      <TextField id={id('url')} label={t('webhooks.url')} hint={t('webhooks.url.hint')} required value={values.url} onInput={set('url')} errors={save.byField.url} />
      <TextField id={id('events')} label={t('webhooks.events')} hint={t('webhooks.events.hint')} required value={values.events} onInput={set('events')} errors={save.byField.events} />
      <TextField id={id('description')} label={t('webhooks.description')} value={values.description} onInput={set('description')} errors={save.byField.description} />
      <div class="actions">
        <button type="submit" disabled={save.busy}>
          {props.submitLabel}
        </button>
        {props.onCancel && (
          <button type="button" class="secondary" onClick={props.onCancel}>
            {t('webhooks.cancel')}
          </button>
        )}
      </div>
    </form>
  );
}
