import { createContext, type ReactNode, useCallback, useContext, useEffect, useState } from 'react';
import { api, type SessionInfo } from './api.ts';

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
      setInfo(await api<SessionInfo>('/api/auth/session'));
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
