// The DNSSEC state of a presence domain and its switch (API guide "DNSSEC (extension)"): not
// signed, signed with the DS records the customer gives the registry, a new key on its way in
// (rolling), or turning off (still signed until the registry has dropped the DS). Turning it on or
// off is a PATCH whose job is shown in place (PresenceFlag).
import type { Resource } from '../api/client';
import type { DomainAttributes } from '../api/domains';
import { useI18n } from '../i18n';
import { PresenceFlag } from './presence-flag';

export function DnssecStatus(props: { domain: Resource<DomainAttributes>; onChanged(): void }) {
  const { t } = useI18n();
  const d = props.domain.attributes.presence?.dnssec;
  if (!d) return null;
  // Turned on, but no DNS server has signed the zone yet: no key, so no DS.
  const state = d.state === 'unsigned' ? (d.enabled ? 'pending' : 'off') : d.state === 'signed' && !d.ds_records.length ? 'pending' : d.state === 'signed' ? 'on' : d.state;
  return (
    <section aria-labelledby="dnssec-title" data-dnssec={state}>
      <h2 id="dnssec-title">{t('dnssec.title')}</h2>
      <p>{t(`dnssec.${state}`)}</p>
      {d.ds_records.length > 0 && (
        <ul class="ds-records" aria-label={t('dnssec.ds')}>
          {d.ds_records.map((ds) => (
            <li key={ds}>
              <code>{ds}</code>
            </li>
          ))}
        </ul>
      )}
      <PresenceFlag domain={props.domain} flag="dnssec" onChanged={props.onChanged} />
    </section>
  );
}
