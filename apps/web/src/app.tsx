/** The shell: reads the session, picks the page for the path, and lays out the signed-in pages. */
import type { ComponentChildren } from "preact"
import { useCallback, useEffect, useState } from "preact/hooks"
import { ApiProblem, call, setCsrfToken } from "./api.js"
import { AccountPage } from "./pages/account.js"
import { ForgotPage, LoginPage, ResetPage, SignupPage, VerifyPage } from "./pages/auth.js"
import { CreditsPage } from "./pages/credits.js"
import { JobPage } from "./pages/job.js"
import { JobsPage } from "./pages/jobs.js"
import { NewJobPage } from "./pages/new-job.js"
import { KeysPage } from "./pages/keys.js"
import { LedgerPage } from "./pages/ledger.js"
import { OverviewPage } from "./pages/overview.js"
import { UsagePage } from "./pages/usage.js"
import { WebhooksPage } from "./pages/webhooks.js"
import { Link, navigate, useLocation } from "./router.js"
import { SessionContext, useSession } from "./session.js"
import type { Session } from "../../../core/schema/dashboard.js"
import { Failure, Loading, Page, useAction } from "./ui.js"

const NAV: ReadonlyArray<readonly [string, string]> = [
  ["/dashboard", "Overview"],
  ["/dashboard/new", "New job"],
  ["/dashboard/jobs", "Jobs"],
  ["/dashboard/keys", "API keys"],
  ["/dashboard/credits", "Credits"],
  ["/dashboard/ledger", "Ledger"],
  ["/dashboard/usage", "Usage"],
  ["/dashboard/webhooks", "Webhooks"],
  ["/dashboard/account", "Account"]
]

const VerifyBanner = () => {
  const { session } = useSession()
  const action = useAction()
  const [sent, setSent] = useState(false)
  if (session === null || session.user.verified) return null
  return (
    <div class="notice" role="note">
      <p>Confirm your e-mail address ({session.user.email}) with the link we sent: live keys and buying credit need it.</p>
      {sent ? <p role="status">We sent a new link.</p> : (
        <button type="button" class="secondary" disabled={action.busy}
          onClick={() => action.run(() => call((api) => api.session.resendVerification({ headers: {} }))).then((r) => r && setSent(true))}>
          Send the link again
        </button>
      )}
      {action.error && <p class="failure" role="alert">{action.error}</p>}
    </div>
  )
}

const Shell = ({ path, children }: { readonly path: string; readonly children: ComponentChildren }) => {
  const { session } = useSession()
  const logout = useAction()
  const active = NAV.filter(([href]) => path === href || (href !== "/dashboard" && path.startsWith(href + "/"))).at(-1)?.[0]
  return (
    <>
      <a class="skip" href="#main">Skip to content</a>
      <header class="top">
        <Link href="/dashboard" class="brand">Hush</Link>
        <nav aria-label="Dashboard">
          <ul>
            {NAV.map(([href, label]) => (
              <li key={href}><Link href={href} aria-current={href === active ? "page" : undefined}>{label}</Link></li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <span>{session?.user.email}</span>
          <button type="button" class="secondary" disabled={logout.busy} onClick={() =>
            logout.run(() => call((api) => api.session.logout({ headers: {} }))).then(() => {
              setCsrfToken(undefined)
              location.assign("/login?signed_out=1")
            })}>
            Log out
          </button>
        </div>
        {logout.error && <p class="failure" role="alert">{logout.error}</p>}
      </header>
      <main id="main" tabIndex={-1}>
        <VerifyBanner />
        {children}
      </main>
    </>
  )
}

const dashboardPage = (path: string) => {
  if (path === "/dashboard") return <OverviewPage />
  if (path === "/dashboard/new") return <NewJobPage />
  if (path === "/dashboard/keys") return <KeysPage />
  if (path === "/dashboard/credits") return <CreditsPage />
  if (path === "/dashboard/ledger") return <LedgerPage />
  if (path === "/dashboard/usage") return <UsagePage />
  if (path === "/dashboard/jobs") return <JobsPage />
  if (path.startsWith("/dashboard/jobs/")) return <JobPage id={decodeURIComponent(path.slice("/dashboard/jobs/".length))} />
  if (path === "/dashboard/account") return <AccountPage />
  if (path === "/dashboard/webhooks") return <WebhooksPage />
  return <NotFoundPage />
}

const NotFoundPage = () => (
  <Page title="Page not found">
    <p>There is no such page. <Link href="/dashboard">Go to the overview</Link>.</p>
  </Page>
)

const publicPage = (path: string) => {
  switch (path) {
    case "/login": return <LoginPage />
    case "/signup": return <SignupPage />
    case "/forgot-password": return <ForgotPage />
    case "/reset-password": return <ResetPage />
    case "/verify-email": return <VerifyPage />
    default: return null
  }
}

type Boot = { readonly state: "loading" } | { readonly state: "failed"; readonly message: string } | { readonly state: "ready" }

export const App = () => {
  const { path } = useLocation()
  const [session, setSession] = useState<Session | null>(null)
  const [boot, setBoot] = useState<Boot>({ state: "loading" })

  const refresh = useCallback(async () => {
    try {
      // no session is an answer here, not an expiry: the routing below sends to /login
      const current = await call((api) => api.session.session(), { loginOn401: false })
      const { csrf_token } = await call((api) => api.auth.csrf())
      setCsrfToken(csrf_token)
      setSession(current)
      setBoot({ state: "ready" })
    } catch (error) {
      setSession(null)
      if (error instanceof ApiProblem && error.status === 401) setBoot({ state: "ready" })
      else setBoot({ state: "failed", message: "The dashboard could not reach the server. Reload the page to try again." })
    }
  }, [])
  useEffect(() => void refresh(), [refresh])

  const signedIn = useCallback((next: Pick<Session, "user" | "account">) => setSession(next as Session), [])

  const outside = publicPage(path)
  const redirect = boot.state !== "ready" || outside !== null
    ? null
    : path === "/" || !path.startsWith("/dashboard")
    ? (session === null ? "/login" : "/dashboard")
    : session === null
    ? `/login?next=${encodeURIComponent(location.pathname + location.search)}`
    : null
  useEffect(() => {
    if (redirect !== null) navigate(redirect, { replace: true })
  }, [redirect])

  let content: ComponentChildren = null
  if (boot.state === "loading") content = <main id="main"><Loading what="your dashboard" /></main>
  else if (boot.state === "failed") content = <main id="main"><Failure message={boot.message} /></main>
  else if (outside !== null) content = <main id="main" class="narrow" tabIndex={-1}>{outside}</main>
  else if (redirect === null) content = <Shell path={path}>{dashboardPage(path)}</Shell>

  return <SessionContext.Provider value={{ session, refresh, signedIn }}>{content}</SessionContext.Provider>
}
