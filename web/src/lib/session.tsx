import { createContext, type ReactNode, useCallback, useContext, useEffect, useRef, useState } from 'react';
import { api, SESSION_INFO_URL, type SessionInfo } from './api.ts';

interface SessionState {
  loading: boolean;
  info: SessionInfo | null;
  refresh(): Promise<void>;
}

const SessionContext = createContext<SessionState>({ loading: true, info: null, refresh: async () => {} });

export function SessionProvider({ children }: { children: ReactNode }) {
  const [info, setInfo] = useState<SessionInfo | null>(null);
  const [loading, setLoading] = useState(true);
  const refresh = useCallback(async () => {
    try {
      setInfo(await api<SessionInfo>(SESSION_INFO_URL));
    } catch {
      setInfo(null);
    } finally {
      setLoading(false);
    }
  }, []);
  useEffect(() => {
    void refresh();
  }, [refresh]);
  return <SessionContext.Provider value={{ loading, info, refresh }}>{children}</SessionContext.Provider>;
}

export const useSession = () => useContext(SessionContext);

/**
 * How many times the signed-in account changed after it was first known (signing out, or in as
 * someone else, elsewhere in the app): a page that read its data with the cookie at once reads it
 * again when this changes. `accountId`: undefined while the session loads, null when signed out.
 */
export function useAccountChanges(accountId: string | null | undefined): number {
  const [changes, setChanges] = useState(0);
  const known = useRef<string | null | undefined>(undefined);
  useEffect(() => {
    if (accountId === undefined) return;
    if (known.current !== undefined && known.current !== accountId) setChanges((n) => n + 1);
    known.current = accountId;
  }, [accountId]);
  return changes;
}
