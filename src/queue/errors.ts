// Errors a job's run may throw that the worker treats specially. A module of its own without
// imports, so drivers (src/provisioning) can throw them without depending on the queue's types.

/** A failure no retry can fix (the object is gone, the data is invalid): the job fails at once. */
export class PermanentJobError extends Error {}
