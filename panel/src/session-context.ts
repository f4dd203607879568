// Who is logged in and, for a reseller, which of its customers the pages show.
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Session } from './api/session';

export interface CustomerAttributes {
  organization: string | null;
  name: string | null;
  email: string | null;
  is_reseller: boolean;
}

export interface SessionState {
  session: Session;
  /** The customer the pages show: the session's own, or one of a reseller's end customers. */
  customerId: string;
}

export const SessionContext = createContext<SessionState | null>(null);

export function useSession(): SessionState {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside a session');
  return s;
}
