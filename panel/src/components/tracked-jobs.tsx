// The jobs a page started (each 202 of API guide "Queue jobs"), newest first, each turning done or
// failed in place; `onFinished` lets the page load its data again.
import { useCallback, useState } from 'preact/hooks';
import { JobStatus, type TrackedJob } from './job-status';

export function useTrackedJobs(): [TrackedJob[], (job: TrackedJob) => void] {
  const [jobs, setJobs] = useState<TrackedJob[]>([]);
  return [jobs, useCallback((job: TrackedJob) => setJobs((all) => [job, ...all]), [])];
}

export function TrackedJobs(props: { jobs: TrackedJob[]; onFinished?(): void }) {
  if (!props.jobs.length) return null;
  return (
    <ul class="jobs">
      {props.jobs.map((j) => (
        <li key={j.id + j.action}>
          <JobStatus job={j} onFinished={props.onFinished} />
        </li>
      ))}
    </ul>
  );
}
