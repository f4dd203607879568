// Adding an e-mail address (API guide "E-mail addresses"): a mailbox or a forward at one of the
// customer's domains, its targets, description and antispam mode, and a generated password (shown
// once by the list page) or one of the user's own with the password rules as a live checklist.
// Hints only: the API checks every rule, and its errors appear at their fields.
import { useState } from 'preact/hooks';
import { FormErrors } from '../components/errors';
import { SelectField, TextField } from '../components/field';
import { NewPasswordField } from '../components/password-field';
import { useSubmit } from '../components/use-submit';
import { useI18n } from '../i18n';
import { AntispamField } from './antispam-field';
import { createAddress, type EmailAddress } from './email-api';

const FIELDS = ['address', 'address_type', 'forward_to', 'description', 'antispam', 'password'] as const;
const fieldId = (f: string) => `new-${f === 'address' ? 'local' : f}`;

/** `a@x.example, b@y.example` (commas, semicolons or spaces) → the list the API gets. */
export const targetsOf = (text: string) => text.split(/[\s,;]+/).filter(Boolean);

export function AddressForm(props: { domains: string[]; onCreated(address: EmailAddress): void }) {
  const { t } = useI18n();
  const [local, setLocal] = useState('');
  const [domain, setDomain] = useState(props.domains[0] ?? '');
  const [type, setType] = useState<'mailbox' | 'forward'>('mailbox');
  const [targets, setTargets] = useState('');
  const [description, setDescription] = useState('');
  const [antispam, setAntispam] = useState('reject');
  const [ownPassword, setOwnPassword] = useState(false);
  const [password, setPassword] = useState('');
  const s = useSubmit(FIELDS, fieldId);
  const address = `${local}@${domain}`;

  const submit = async (e: Event) => {
    e.preventDefault();
    const attributes: Record<string, unknown> = { address, address_type: type, antispam };
    if (description.trim()) attributes.description = description;
    if (targets.trim() || type === 'forward') attributes.forward_to = targetsOf(targets);
    if (type === 'mailbox' && ownPassword) attributes.password = password;
    let created: EmailAddress | null = null;
    if (await s.run(async () => (created = await createAddress(attributes)))) {
      setLocal('');
      setTargets('');
      setDescription('');
      setPassword('');
      props.onCreated(created!);
    }
  };

  if (!props.domains.length) return <p>{t('mail.create.noDomain')}</p>;
  return (
    <form onSubmit={submit} noValidate class="address-form">
      <FormErrors errors={s.form} />
      <div class="grid">
        <TextField id="new-local" label={t('mail.local')} hint={t('mail.local.hint')} value={local} onInput={setLocal} errors={s.byField.address} required />
        <SelectField id="new-domain" label={t('mail.domain')} value={domain} onInput={setDomain} options={props.domains.map((d) => ({ value: d, label: `@${d}` }))} />
        <SelectField
          id="new-address_type"
          label={t('mail.type')}
          value={type}
          onInput={(v) => setType(v as 'mailbox' | 'forward')}
          options={[{ value: 'mailbox', label: t('mail.type.mailbox') }, { value: 'forward', label: t('mail.type.forward') }]}
          errors={s.byField.address_type}
        />
        <AntispamField id="new-antispam" value={antispam} onInput={setAntispam} errors={s.byField.antispam} />
      </div>
      <TextField
        id="new-forward_to"
        label={t('mail.forwardTo')}
        hint={t(type === 'forward' ? 'mail.forwardTo.hint.forward' : 'mail.forwardTo.hint.mailbox')}
        value={targets}
        onInput={setTargets}
        errors={s.byField.forward_to}
        required={type === 'forward'}
      />
      <TextField id="new-description" label={t('mail.description')} value={description} onInput={setDescription} errors={s.byField.description} />
      {type === 'mailbox' && (
        <fieldset class="choice">
          <legend>{t('mail.password')}</legend>
          <label>
            <input type="radio" name="new-password-mode" checked={!ownPassword} onChange={() => setOwnPassword(false)} /> {t('mail.password.generate')}
          </label>
          <label>
            <input type="radio" name="new-password-mode" checked={ownPassword} onChange={() => setOwnPassword(true)} /> {t('mail.password.own')}
          </label>
          {ownPassword && <NewPasswordField id="new-password" label={t('mail.password.new')} address={address} value={password} onInput={setPassword} errors={s.byField.password} />}
        </fieldset>
      )}
      <div class="actions">
        <button type="submit" disabled={s.busy}>
          {t('mail.create.submit')}
        </button>
      </div>
    </form>
  );
}
