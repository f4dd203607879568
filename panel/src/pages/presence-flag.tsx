// One presence flag of a domain with the button that switches it (API guide "Domains": PATCH
// /domains/{name} sets presence.dns_update_lock or presence.dns_migration_mode.enabled, and
// presence.dnssec.enabled — "DNSSEC (extension)" —, for the customer and for its reseller alike).
// The answer is the domain as it is now, or a 202 with a job (DNSSEC), shown in place like every other.
import { useState } from 'preact/hooks';
import { api, type Resource } from '../api/client';
import { jobIdOf } from '../api/jobs';
import { FormErrors } from '../components/errors';
import { JobStatus, type TrackedJob } from '../components/job-status';
import { useSubmit } from '../components/use-submit';
import { useI18n } from '../i18n';
import type { DomainAttributes } from '../api/domains';
import './account.css';

type Flag = 'lock' | 'migration' | 'dnssec';
type Presence = NonNullable<DomainAttributes['presence']>;

const valueOf = (p: Presence, flag: Flag) => (flag === 'lock' ? p.dns_update_lock : flag === 'migration' ? p.dns_migration_mode.enabled : !!p.dnssec?.enabled);
const patchOf = (flag: Flag, on: boolean) =>
  flag === 'lock' ? { dns_update_lock: on } : flag === 'migration' ? { dns_migration_mode: { enabled: on } } : { dnssec: { enabled: on } };
const NAMES = { lock: 'domains.updateLock', migration: 'domains.migration', dnssec: 'dnssec.title' } as const;

export function PresenceFlag(props: { domain: Resource<DomainAttributes>; flag: Flag; onChanged(): void }) {
  const { t } = useI18n();
  const { domain, flag } = props;
  // What a 200 answered; else the domain as the page last read it (it reads it again after a 202).
  const [answered, setAnswered] = useState<Presence | null>(null);
  const presence = answered ?? domain.attributes.presence!;
  const [changed, setChanged] = useState(false);
  const [job, setJob] = useState<TrackedJob | null>(null);
  const patch = useSubmit([]);
  const on = valueOf(presence, flag);
  const action = t(`domains.${flag}.${on ? 'off' : 'on'}`);
  const flagName = t(NAMES[flag]);

  const toggle = () =>
    patch.run(async () => {
      const body = { data: { type: 'domain', id: domain.id, attributes: { presence: patchOf(flag, !on) } } };
      const { status, data } = await api<Resource>('PATCH', `/domains/${encodeURIComponent(domain.id)}`, { body });
      if (status === 202) {
        setJob({ id: jobIdOf(data)!, action: 'update', label: `${domain.attributes.name}: ${flagName}` });
        // The choice is stored at once: the page shows it while the job runs.
        props.onChanged();
      } else if (data.attributes.presence) setAnswered(data.attributes.presence as Presence);
      setChanged(true);
    });

  return (
    <div class="flag" data-flag={flag}>
      <span>{on ? t('domains.on') : t('domains.off')}</span>
      <button type="button" class="secondary" disabled={patch.busy} aria-label={t('domains.flagFor', { action, name: domain.attributes.name })} onClick={toggle}>
        {action}
      </button>
      {changed && !job && (
        <span class="visually-hidden" role="status">
          {t('domains.changed', { name: domain.attributes.name, flag: flagName, state: on ? t('domains.on') : t('domains.off') })}
        </span>
      )}
      {job && <JobStatus job={job} onFinished={props.onChanged} />}
      <FormErrors errors={patch.form} />
    </div>
  );
}
