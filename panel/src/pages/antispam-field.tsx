// The antispam mode of an address (API guide "E-mail addresses"), with a hint for the mode chosen:
// the same select on the new-address form and an address's settings.
import type { ApiErrorObject } from '../api/client';
import { SelectField } from '../components/field';
import { useI18n, type MessageKey } from '../i18n';
import { ANTISPAM_MODES } from './email-api';

export function AntispamField(props: { id: string; value: string; onInput(value: string): void; errors?: ApiErrorObject[] }) {
  const { t } = useI18n();
  return (
    <SelectField
      id={props.id}
      label={t('mail.antispam')}
      hint={t(`mail.antispam.hint.${props.value}` as MessageKey)}
      value={props.value}
      onInput={props.onInput}
      options={ANTISPAM_MODES.map((m) => ({ value: m, label: t(`mail.antispam.${m}` as MessageKey) }))}
      errors={props.errors}
    />
  );
}
