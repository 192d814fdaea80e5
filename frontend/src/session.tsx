import { createContext, useContext } from "react";
import type { Session } from "./api/types";

export type SessionApi = {
  session: Session;
  setSession: (s: Session | null) => void;
};
export const SessionContext = createContext<SessionApi | null>(null);

export function useSession(): SessionApi {
  const s = useContext(SessionContext);
  if (!s) throw new Error("useSession outside a logged-in shell");
  return s;
}

/** Whether the current role may change things (viewers only read). */
export function canWrite(s: Session): boolean {
  const org = s.orgs.find((o) => o.id === s.currentOrgId);
  return org ? org.role !== "viewer" : false;
}
