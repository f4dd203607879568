// The queue's job contract bound to what every resource job gets: the drivers of
// src/provisioning/drivers.ts. Resource jobs import from here, not from src/queue, so the queue
// itself knows no driver.
import type { TSchema } from 'typebox';
import type { Drivers } from '../provisioning/drivers.js';
import { defineJob as defineQueueJob, type JobContext as QueueJobContext, type JobDefinition } from '../queue/types.js';

export type JobContext<P = unknown> = QueueJobContext<P, Drivers>;
export const defineJob = <S extends TSchema>(definition: JobDefinition<S, Drivers>) => defineQueueJob(definition);
export { DONE, objectIdOf, PermanentJobError, type JobResult } from '../queue/types.js';
