// Loads a page's data; `reload()` loads it again (after a job is done). Errors stay ApiErrors.
import { useCallback, useEffect, useState } from 'preact/hooks';

export type Loaded<D> = { state: 'loading' } | { state: 'ready'; data: D } | { state: 'error'; error: unknown };

export function useLoad<D>(load: () => Promise<D>, deps: unknown[]): [Loaded<D>, () => void] {
  const [loaded, setLoaded] = useState<Loaded<D>>({ state: 'loading' });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let current = true;
    load().then(
      (data) => current && setLoaded({ state: 'ready', data }),
      (error) => current && setLoaded({ state: 'error', error }),
    );
    return () => {
      current = false;
    };
  }, [...deps, round]);
  return [loaded, useCallback(() => setRound((r) => r + 1), [])];
}
