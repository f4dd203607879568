import { Link } from '../components/link';
import { PageHeading } from '../components/page-heading';
import { useI18n } from '../i18n';

export function NotFoundPage() {
  const { t } = useI18n();
  return (
    <section class="not-found">
      <PageHeading title={t('notFound.title')} />
      <p>{t('notFound.text')}</p>
      <p>
        <Link to={{ page: 'overview' }}>{t('notFound.home')}</Link>
      </p>
    </section>
  );
}
