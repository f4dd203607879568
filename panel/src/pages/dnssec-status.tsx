// The DNSSEC state of a presence domain (API guide "DNSSEC (extension)"): not signed, turned on but
// not yet signed, or signed with the DS records the customer gives the registry. The API does not
// yet let a customer switch it (the operator does), so this section only shows.
import type { DomainAttributes } from '../api/domains';
import { useI18n } from '../i18n';

export function DnssecStatus(props: { dnssec: NonNullable<DomainAttributes['presence']>['dnssec'] }) {
  const { t } = useI18n();
  const d = props.dnssec;
  if (!d) return null;
  const state = !d.enabled ? 'off' : d.ds_records.length ? 'on' : 'pending';
  return (
    <section aria-labelledby="dnssec-title" data-dnssec={state}>
      <h2 id="dnssec-title">{t('dnssec.title')}</h2>
      <p>{t(state === 'off' ? 'dnssec.off' : state === 'pending' ? 'dnssec.pending' : 'dnssec.on')}</p>
      {state === 'on' && (
        <ul class="ds-records" aria-label={t('dnssec.ds')}>
          {d.ds_records.map((ds) => (
            <li key={ds}>
              <code>{ds}</code>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
