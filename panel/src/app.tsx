// The panel's shell: session, language, the reseller's customer switcher, the accessible layout
// (landmarks, skip link) and the page of the current route.
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { list, setUnauthorizedHandler, type Resource } from './api/client';
import { currentSession, logOut, type Session } from './api/session';
import { FormErrors } from './components/errors';
import { Link } from './components/link';
import { I18nContext, LANGS, initialLang, rememberLang, translator, type Lang, type MessageKey, type T } from './i18n';
import { DnsRecordsPage } from './pages/dns-records';
import { DomainsPage } from './pages/domains';
import { EmailAddressPage } from './pages/email-address';
import { EmailAddressesPage } from './pages/email-addresses';
import { LoginPage } from './pages/login';
import { NotFoundPage } from './pages/not-found';
import { AccountNav, AccountPage } from './pages/account-pages';
import { OverviewPage } from './pages/overview';
import { DatabasePage } from './pages/database';
import { DatabasesPage } from './pages/databases';
import { SubdomainPage } from './pages/subdomain';
import { SubdomainsPage } from './pages/subdomains';
import { href, navigate, useRoute, type Route } from './router';
import { SessionContext, type CustomerAttributes } from './session-context';

const CUSTOMER_KEY = 'hostplane.customer';

export function App() {
  const [lang, setLangState] = useState<Lang>(initialLang);
  const i18n = useMemo(() => ({ lang, t: translator(lang), setLang: (l: Lang) => (rememberLang(l), setLangState(l)) }), [lang]);
  const { t } = i18n;
  const route = useRoute();
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [startError, setStartError] = useState<unknown>(null);
  const [notice, setNotice] = useState<MessageKey | null>(null);
  const [customers, setCustomers] = useState<Resource<CustomerAttributes>[]>([]);
  const [customerId, setCustomerIdState] = useState<string | null>(null);
  const loggingOut = useRef(false);

  useEffect(() => {
    document.documentElement.lang = lang;
  }, [lang]);

  useEffect(() => {
    setUnauthorizedHandler(() => {
      // A page's requests still on their way when the user logs out answer 401: not an ended session.
      if (loggingOut.current) return;
      setSession(null);
      setNotice('app.sessionEnded');
    });
    currentSession().then(setSession, setStartError);
  }, []);

  // A reseller's customers, for the switcher; the choice lasts as long as the tab.
  useEffect(() => {
    if (!session) return;
    const remembered = sessionStorage.getItem(CUSTOMER_KEY);
    setCustomerIdState(session.customer_id);
    if (!session.is_reseller) return;
    list<CustomerAttributes>('/customers').then((all) => {
      setCustomers(all);
      if (remembered && all.some((c) => c.id === remembered)) setCustomerIdState(remembered);
    }, () => setCustomers([]));
  }, [session]);

  // Logged out → the login page; logged in → never the login page. Before the paint, so the
  // address never shows one page while the other is drawn.
  useLayoutEffect(() => {
    if (session === null && route.page !== 'login') navigate(href({ page: 'login' }), { replace: true });
    if (session && route.page === 'login') navigate(href({ page: 'overview' }), { replace: true });
  }, [session, route.page]);

  const setCustomerId = (id: string) => {
    sessionStorage.setItem(CUSTOMER_KEY, id);
    setCustomerIdState(id);
    // A domain (a webhook) of the previous customer is not the new one's: back to its list.
    if (route.page === 'dns') navigate(href({ page: 'domains' }));
    // A package's page shows the package of one customer: back to the new one's packages.
    if (['subdomains', 'subdomain', 'databases', 'database'].includes(route.page)) navigate(href({ page: 'overview' }));
    if (route.page === 'email-address') navigate(href({ page: 'email' }));
    if (route.page === 'deliveries') navigate(href({ page: 'webhooks' }));
  };

  const loggedIn = (s: Session) => {
    loggingOut.current = false;
    setNotice(null);
    setSession(s);
  };
  const doLogOut = async () => {
    loggingOut.current = true;
    await logOut().catch(() => {});
    sessionStorage.removeItem(CUSTOMER_KEY);
    setCustomers([]);
    setSession(null);
    setNotice('app.loggedOut');
  };

  let page;
  if (startError) page = <FormErrors errors={[{ id: 'network', status: '0' }]} />;
  else if (session === undefined || (session && customerId === null)) page = <p role="status">{t('app.loading')}</p>;
  else if (session === null || route.page === 'login') page = <LoginPage notice={notice} onLoggedIn={loggedIn} />;
  else page = <Page route={route} />;

  return (
    <I18nContext.Provider value={i18n}>
      <SessionContext.Provider value={session && customerId ? { session, customerId } : null}>
        <a class="skip" href="#main">
          {t('app.skip')}
        </a>
        <header class="top">
          <div class="bar">
            <span class="brand">{t('app.name')}</span>
            {session && (
              <nav aria-label={t('app.nav')}>
                <ul>
                  <li>
                    <Link to={{ page: 'overview' }} aria-current={route.page === 'overview' ? 'page' : undefined}>
                      {t('nav.overview')}
                    </Link>
                  </li>
                  <li>
                    <Link to={{ page: 'domains' }} aria-current={route.page === 'domains' || route.page === 'dns' ? 'page' : undefined}>
                      {t('nav.domains')}
                    </Link>
                  </li>
                  <li>
                    <Link to={{ page: 'email' }} aria-current={route.page === 'email' || route.page === 'email-address' ? 'page' : undefined}>
                      {t('nav.email')}
                    </Link>
                  </li>
                  <AccountNav page={route.page} />
                </ul>
              </nav>
            )}
          </div>
          <div class="tools">
            {session?.is_reseller && customers.length > 0 && customerId && (
              <div class="tool">
                <label for="customer-switch">{t('app.customer')}</label>
                <select id="customer-switch" value={customerId} onChange={(e) => setCustomerId((e.currentTarget as HTMLSelectElement).value)}>
                  {customers.map((c) => (
                    <option key={c.id} value={c.id}>
                      {customerLabel(c, session, t)}
                    </option>
                  ))}
                </select>
              </div>
            )}
            <div class="tool">
              <label for="language">{t('app.language')}</label>
              <select id="language" value={lang} onChange={(e) => i18n.setLang((e.currentTarget as HTMLSelectElement).value as Lang)}>
                {LANGS.map((l) => (
                  <option key={l.code} value={l.code} lang={l.code}>
                    {l.name}
                  </option>
                ))}
              </select>
            </div>
            {session && (
              <div class="tool">
                <span class="who">{t('app.signedInAs', { email: session.email })}</span>
                <button type="button" class="secondary" onClick={doLogOut}>
                  {t('app.logout')}
                </button>
              </div>
            )}
          </div>
        </header>
        <main id="main" tabIndex={-1}>
          {page}
        </main>
      </SessionContext.Provider>
    </I18nContext.Provider>
  );
}

function customerLabel(c: Resource<CustomerAttributes>, session: Session, t: T) {
  const name = `${c.attributes.organization || c.attributes.name || c.id} (${c.id})`;
  return c.id === session.customer_id ? t('app.customer.own', { name }) : name;
}

function Page(props: { route: Route }) {
  const { route } = props;
  switch (route.page) {
    case 'overview':
      return <OverviewPage />;
    case 'domains':
      return <DomainsPage />;
    case 'dns':
      return <DnsRecordsPage domain={route.domain} />;
    case 'subdomains':
      return <SubdomainsPage packageId={route.packageId} />;
    case 'subdomain':
      return <SubdomainPage id={route.id} />;
    case 'databases':
      return <DatabasesPage packageId={route.packageId} />;
    case 'database':
      return <DatabasePage id={route.id} />;
    case 'email':
      return <EmailAddressesPage />;
    case 'email-address':
      return <EmailAddressPage id={route.id} />;
    case 'security':
    case 'availability':
    case 'ssh-keys':
    case 'webhooks':
    case 'deliveries':
    case 'activity':
      return <AccountPage route={route} />;
    default:
      return <NotFoundPage />;
  }
}
