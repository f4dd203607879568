// What a form's request is doing, announced politely: "Saving…", then "Saved." (a change of
// antispam can take seconds while the spam filter fetches it).
import { useI18n } from '../i18n';

export function Saving(props: { busy: boolean; done: boolean }) {
  const { t } = useI18n();
  return (
    <span role="status" class="saving">
      {props.busy ? t('mail.saving') : props.done ? t('mail.saved') : ''}
    </span>
  );
}
