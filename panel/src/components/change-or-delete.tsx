// A list row's actions: a "Change" link to the object's page and "Delete", asked once more (the
// subdomain and database lists). `name` is what both say they act on ("database shop_db").
import type { Route } from '../router';
import { useI18n } from '../i18n';
import { ConfirmButton } from './confirm-button';
import { Link } from './link';

export function ChangeOrDelete(props: { id: string; to: Route; name: string; question: string; onDelete(): Promise<void> | void }) {
  const { t } = useI18n();
  return (
    <>
      <Link to={props.to} class="button-link" label={`${t('web.change')}: ${props.name}`}>
        {t('web.change')}
      </Link>{' '}
      <ConfirmButton
        id={`delete-${props.id}`}
        label={t('web.delete')}
        ariaLabel={`${t('web.delete')}: ${props.name}`}
        question={props.question}
        yes={t('web.delete.yes')}
        cancel={t('web.cancel')}
        onConfirm={props.onDelete}
      />
    </>
  );
}
