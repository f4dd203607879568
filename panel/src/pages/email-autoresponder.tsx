// A mailbox's autoresponder (API guide "E-mail addresses"): whether it is on now, a switch, and
// its text and dates. The API takes exactly one of its four keys per request, so saving sends one
// PATCH per changed key, in order, and stops at the first refusal, shown at its field.
import { useState } from 'preact/hooks';
import { describedBy, Frame } from '../components/field';
import { FormErrors } from '../components/errors';
import { Saving } from '../components/saving';
import { useSubmit } from '../components/use-submit';
import { formatDate, useI18n } from '../i18n';
import { patchAddress, type AutoresponderKey, type EmailAddress } from './email-api';

const KEYS = ['autoresponder.text', 'autoresponder.activates', 'autoresponder.expires'] as const;
const fieldId = (f: string) => `auto-${f.split('.')[1]}`;

export function AutoresponderSection(props: { address: EmailAddress; onSaved(): void }) {
  const { t, lang } = useI18n();
  const { id } = props.address;
  const auto = props.address.attributes.autoresponder!;
  const [text, setText] = useState(auto.text);
  const [activates, setActivates] = useState(auto.activates ?? '');
  const [expires, setExpires] = useState(auto.expires ?? '');
  const toggle = useSubmit([], () => 'auto-toggle');
  const form = useSubmit(KEYS, fieldId);
  const patch = (key: AutoresponderKey, value: unknown) => patchAddress(id, { autoresponder: { [key]: value } });

  const switchIt = async () => {
    if (await toggle.run(() => patch('active', !auto.active))) props.onSaved();
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    const changes: [AutoresponderKey, unknown][] = [];
    if (text !== auto.text) changes.push(['text', text]);
    if (activates !== (auto.activates ?? '')) changes.push(['activates', activates || null]);
    if (expires !== (auto.expires ?? '')) changes.push(['expires', expires || null]);
    await form.run(async () => {
      for (const [key, value] of changes) await patch(key, value);
    });
    props.onSaved();
  };

  const date = (iso: string) => formatDate(lang, `${iso}T12:00:00Z`);
  const dateField = (key: 'activates' | 'expires', value: string, set: (v: string) => void) => {
    const fid = fieldId(`autoresponder.${key}`);
    const errors = form.byField[`autoresponder.${key}`];
    return (
      <Frame id={fid} label={t(`mail.auto.${key}`)} hint={t('mail.auto.date.hint')} errors={errors} value={value} onInput={set}>
        <input
          id={fid}
          type="date"
          value={value}
          onInput={(e) => set((e.currentTarget as HTMLInputElement).value)}
          aria-invalid={errors?.length ? 'true' : undefined}
          aria-describedby={describedBy(fid, 'hint', errors)}
        />
      </Frame>
    );
  };
  const textErrors = form.byField['autoresponder.text'];

  return (
    <>
      <h2>{t('mail.auto')}</h2>
      <div class="switch" data-autoresponder={auto.active ? 'on' : 'off'}>
        <p role="status">
          <strong>{t(auto.active ? 'mail.auto.on' : 'mail.auto.off')}</strong>
          {auto.activates && ` ${t('mail.auto.switchesOn', { date: date(auto.activates) })}`}
          {auto.expires && ` ${t('mail.auto.switchesOff', { date: date(auto.expires) })}`}
        </p>
        <button type="button" id="auto-toggle" class={auto.active ? 'secondary' : undefined} disabled={toggle.busy} onClick={switchIt}>
          {t(auto.active ? 'mail.auto.switchOff' : 'mail.auto.switchOn')}
        </button>
        <FormErrors errors={toggle.form} />
      </div>
      <form onSubmit={submit} noValidate class="autoresponder-form">
        <p class="hint">{t('mail.auto.intro')}</p>
        <FormErrors errors={form.form} />
        <Frame id="auto-text" label={t('mail.auto.text')} errors={textErrors} value={text} onInput={setText}>
          <textarea
            id="auto-text"
            rows={5}
            value={text}
            onInput={(e) => setText((e.currentTarget as HTMLTextAreaElement).value)}
            aria-invalid={textErrors?.length ? 'true' : undefined}
            aria-describedby={describedBy('auto-text', undefined, textErrors)}
          />
        </Frame>
        <div class="grid">
          {dateField('activates', activates, setActivates)}
          {dateField('expires', expires, setExpires)}
        </div>
        <div class="actions">
          <button type="submit" disabled={form.busy}>
            {t('mail.auto.save')}
          </button>
          <Saving busy={form.busy} done={form.done} />
        </div>
      </form>
    </>
  );
}
