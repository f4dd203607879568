// What a page of one object shows before its data is there: "loading", the API's error, or "not
// found" for another customer's object (the API answers 404; 400/422 for an id that names nothing).
import { ApiError } from '../api/client';
import { useI18n } from '../i18n';
import { NotFoundPage } from '../pages/not-found';
import { apiErrors } from '../pages/page-errors';
import { FormErrors } from './errors';
import { PageHeading } from './page-heading';
import type { Loaded } from './use-load';

export function NotReady(props: { loaded: Exclude<Loaded<unknown>, { state: 'ready' }>; title: string }) {
  const { t } = useI18n();
  const { loaded } = props;
  if (loaded.state === 'error' && loaded.error instanceof ApiError && [400, 404, 422].includes(loaded.error.status)) return <NotFoundPage />;
  return (
    <section>
      <PageHeading title={props.title} />
      {loaded.state === 'loading' ? <p role="status">{t('app.loading')}</p> : <FormErrors errors={apiErrors(loaded.error)} />}
    </section>
  );
}
