// What the PHP-FPM supervisors of one web driver share about each (state dir, PHP version): the
// chain of their calls, so that two calls never write the same pools or signal the same master at
// once, and whether files were written that the master has not taken yet. The web driver builds
// one and hands it to every supervisor it makes; a process runs one driver, and one web worker per
// web server (docs/decisions/0008-web-servers.md) means no other process writes the same state dir.

export class PhpFpmRegistry {
  /** Per (state dir, version): the tail of the chain of calls, so they run one after the other. */
  private readonly queues = new Map<string, Promise<void>>();
  /**
   * (state dir, version) whose files changed but whose master did not take them (start or reload
   * failed): the next call reloads even though the files are as it would write them.
   */
  private readonly unapplied = new Set<string>();

  /** Runs `fn` once every call of (stateDir, version) queued before it has settled. */
  async serialise<T>(stateDir: string, version: string, fn: () => Promise<T>): Promise<T> {
    const key = this.key(stateDir, version);
    const run = (this.queues.get(key) ?? Promise.resolve()).then(fn);
    const tail = run.then(
      () => {},
      () => {},
    );
    this.queues.set(key, tail);
    try {
      return await run;
    } finally {
      if (this.queues.get(key) === tail) this.queues.delete(key);
    }
  }

  /** The files of (stateDir, version) changed: its master must (re)load them. */
  markUnapplied(stateDir: string, version: string): void {
    this.unapplied.add(this.key(stateDir, version));
  }

  isUnapplied(stateDir: string, version: string): boolean {
    return this.unapplied.has(this.key(stateDir, version));
  }

  /** The master of (stateDir, version) runs its files as written, or no longer runs at all. */
  markApplied(stateDir: string, version: string): void {
    this.unapplied.delete(this.key(stateDir, version));
  }

  private key(stateDir: string, version: string): string {
    return `${stateDir}\0${version}`;
  }
}
