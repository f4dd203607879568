// The account pages' nav links and route cases, kept here so app.tsx names them in two lines.
import { Link } from '../components/link';
import { useI18n, type MessageKey } from '../i18n';
import type { Route } from '../router';
import { AvailabilityPage } from './availability';
import { DeliveriesPage } from './webhook-deliveries';
import { SecurityPage } from './security';
import { SshKeysPage } from './ssh-keys';
import { WebhooksPage } from './webhooks';

const LINKS: { page: 'availability' | 'ssh-keys' | 'webhooks' | 'security'; label: MessageKey }[] = [
  { page: 'availability', label: 'nav.availability' },
  { page: 'ssh-keys', label: 'nav.sshKeys' },
  { page: 'webhooks', label: 'nav.webhooks' },
  { page: 'security', label: 'nav.security' },
];

export function AccountNav(props: { page: Route['page'] }) {
  const { t } = useI18n();
  return (
    <>
      {LINKS.map((l) => (
        <li key={l.page}>
          <Link to={{ page: l.page }} aria-current={props.page === l.page || (l.page === 'webhooks' && props.page === 'deliveries') ? 'page' : undefined}>
            {t(l.label)}
          </Link>
        </li>
      ))}
    </>
  );
}

export function AccountPage(props: { route: Route }) {
  const { route } = props;
  switch (route.page) {
    case 'security':
      return <SecurityPage />;
    case 'availability':
      return <AvailabilityPage />;
    case 'ssh-keys':
      return <SshKeysPage />;
    case 'webhooks':
      return <WebhooksPage />;
    case 'deliveries':
      return <DeliveriesPage webhook={route.webhook} />;
    default:
      return null;
  }
}
