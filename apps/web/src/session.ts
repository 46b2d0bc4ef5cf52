/** Who is signed in, shared by every page; `refresh` reads it again from the server. */
import { createContext } from "preact"
import { useContext } from "preact/hooks"
import type { Session } from "../../../core/schema/dashboard.js"

export interface SessionState {
  readonly session: Session | null
  readonly refresh: () => Promise<void>
  readonly signedIn: (session: Pick<Session, "user" | "account">) => void
}

export const SessionContext = createContext<SessionState>({ session: null, refresh: async () => {}, signedIn: () => {} })

export const useSession = () => useContext(SessionContext)
