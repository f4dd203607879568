// A 202's job shown in place: pending, then done or failed (API guide "Queue jobs"), announced
// politely to screen readers.
import { useEffect, useState } from 'preact/hooks';
import { waitForJob, type JobAttributes } from '../api/jobs';
import { useI18n } from '../i18n';

export interface TrackedJob {
  id: string;
  action: 'create' | 'delete' | 'update';
  /** What the job is about, e.g. "TXT record _acme-challenge". */
  label: string;
}

export function JobStatus(props: { job: TrackedJob; onFinished?(job: JobAttributes): void }) {
  const { t } = useI18n();
  const [state, setState] = useState<JobAttributes['status'] | 'lost'>('pending');
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const abort = new AbortController();
    waitForJob(props.job.id, undefined, abort.signal).then(
      (job) => {
        setState(job.status);
        setError(job.error);
        props.onFinished?.(job);
      },
      // Polling stopped (the page left, or a request failed): say so rather than stay "pending".
      () => {
        if (!abort.signal.aborted) setState('lost');
      },
    );
    return () => abort.abort();
  }, [props.job.id]);
  const text = state === 'failed' ? t('job.failed', { error: error ?? '' }) : t(`job.${state}`);
  return (
    <p class={`job job-${state}`} role="status" data-job={props.job.id} data-status={state}>
      {t(`job.${props.job.action}`)} {props.job.label}: {text}
    </p>
  );
}
