// SIGINT/SIGTERM for the long-running commands (serve, worker, dns): a stop asked for while one
// starts (systemd's, a Ctrl-C) is kept and done once it has started, so it is as clean as any
// other; a second signal exits at once.

type Stop = (signal: NodeJS.Signals) => unknown;

/**
 * Holds the stop signals from now on:
 * `const signals = holdStopSignals(); …start… signals.started(stop)`, or `signals.release()` when
 * the start fails.
 */
export function holdStopSignals() {
  let early: NodeJS.Signals | null = null;
  const keep = (signal: NodeJS.Signals) => {
    if (early) process.exit(1);
    early = signal;
  };
  const release = () => {
    process.off('SIGINT', keep);
    process.off('SIGTERM', keep);
  };
  process.on('SIGINT', keep);
  process.on('SIGTERM', keep);
  return {
    /** `stop` handles the signals from now on, and a signal that came while starting at once. */
    started(stop: Stop) {
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
      // Only now: a signal's last listener removed drops a signal still on its way.
      release();
      if (early) void stop(early);
    },
    release,
  };
}
