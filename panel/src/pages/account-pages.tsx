// The account pages' nav links and route cases, kept here so app.tsx names them in two lines.
import { Link } from '../components/link';
import { useI18n, type MessageKey } from '../i18n';
import type { Route } from '../router';
import { useSession } from '../session-context';
import { ActivityPage } from './activity';
import { AvailabilityPage } from './availability';
import { DeliveriesPage } from './webhook-deliveries';
import { SecurityPage } from './security';
import { SshKeysPage } from './ssh-keys';
import { WebhooksPage } from './webhooks';

const LINKS: { page: 'availability' | 'ssh-keys' | 'webhooks' | 'activity' | 'security'; label: MessageKey }[] = [
  { page: 'availability', label: 'nav.availability' },
  { page: 'ssh-keys', label: 'nav.sshKeys' },
  { page: 'webhooks', label: 'nav.webhooks' },
  { page: 'activity', label: 'nav.activity' },
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

// Keyed by the shown customer: a reseller switching customers gets the page afresh, so a secret
// shown once or a half-filled form of the previous customer does not stay on screen.
export function AccountPage(props: { route: Route }) {
  const { route } = props;
  const { customerId } = useSession();
  switch (route.page) {
    case 'security':
      return <SecurityPage />;
    case 'availability':
      return <AvailabilityPage />;
    case 'ssh-keys':
      return <SshKeysPage key={customerId} />;
    case 'webhooks':
      return <WebhooksPage key={customerId} />;
    case 'deliveries':
      return <DeliveriesPage key={customerId} webhook={route.webhook} />;
    case 'activity':
      return <ActivityPage key={customerId} />;
    default:
      return null;
  }
}
