/** Pages outside the session: log in, sign up, forgot and reset password, verify the address. */
import { useEffect, useRef, useState } from "preact/hooks"
import { call, setCsrfToken } from "../api.js"
import { Link, navigate, useLocation } from "../router.js"
import { useSession } from "../session.js"
import { Field, FormError, Loading, Page, useAction } from "../ui.js"

const PROVIDER_NAMES: Record<string, string> = { github: "GitHub", google: "Google", oidc: "single sign-on" }

/** The providers this deployment configured (the server writes them into the page). */
const configuredProviders = (): ReadonlyArray<"github" | "google" | "oidc"> =>
  (document.querySelector<HTMLMetaElement>('meta[name="hush-oauth"]')?.content ?? "")
    .split(" ")
    .filter((name): name is "github" | "google" | "oidc" => name in PROVIDER_NAMES)

/** Why an OAuth sign-in came back to /login (`?error=`), in words. */
const OAUTH_ERRORS: Record<string, string> = {
  invalid_state: "The sign-in took too long or was started in another browser. Please try again.",
  access_denied: "You declined the sign-in at the provider.",
  oauth_failed: "The provider did not complete the sign-in. Please try again.",
  email_required: "The provider did not give us an e-mail address.",
  oauth_email_unverified: "The provider has not verified your e-mail address. Verify it there, or sign up with a password.",
  email_in_use: "An account with this address already exists: log in with your password, then connect the provider from your account.",
  verify_email_first: "Confirm your e-mail address (see the link we sent) before connecting a provider with another address.",
  terms_required: "A first sign-in needs the terms accepted: use the sign-up page.",
  identity_in_use: "That provider account belongs to another Hush user."
}

const OAuthButtons = ({ acceptTerms }: { readonly acceptTerms: boolean }) => {
  const providers = configuredProviders()
  const action = useAction()
  if (providers.length === 0) return null
  const start = (provider: "github" | "google" | "oidc") =>
    action.run(async () => {
      // a pre-session CSRF token (also set as a cookie) guards the start
      setCsrfToken((await call((api) => api.auth.csrf())).csrf_token)
      const { authorize_url } = await call((api) =>
        api.auth.oauthStart({ path: { provider }, payload: { accept_terms: acceptTerms, connect: false }, headers: {} }))
      location.assign(authorize_url)
    })
  return (
    <div class="oauth">
      <p class="or">or</p>
      {providers.map((provider) => (
        <button type="button" class="secondary wide" key={provider} disabled={action.busy} onClick={() => start(provider)}>
          Continue with {PROVIDER_NAMES[provider]}
        </button>
      ))}
      <FormError error={action.error} />
    </div>
  )
}

/** `next` only ever names a dashboard page of this site. */
const safeNext = (next: string | null) => (next !== null && /^\/dashboard(\/|\?|$)/.test(next) ? next : "/dashboard")

export const LoginPage = () => {
  const { query } = useLocation()
  const { signedIn } = useSession()
  const action = useAction()
  const [email, setEmail] = useState("")
  const [password, setPassword] = useState("")
  const oauthError = query.get("error")
  return (
    <Page title="Log in to Hush">
      {query.get("signed_out") && <p class="success" role="status">You are logged out.</p>}
      {query.get("expired") && <p class="notice" role="status">Your session ended. Log in again to continue.</p>}
      {oauthError && <p class="failure" role="alert">{OAUTH_ERRORS[oauthError] ?? "The sign-in did not complete. Please try again."}</p>}
      <form onSubmit={(event) => {
        event.preventDefault()
        action.run(async () => {
          const answer = await call((api) => api.auth.login({ payload: { email, password } }))
          setCsrfToken(answer.csrf_token)
          signedIn(answer)
          navigate(safeNext(query.get("next")), { replace: true })
        })
      }}>
        <Field label="E-mail address">
          <input type="email" name="email" autoComplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        </Field>
        <Field label="Password">
          <input type="password" name="password" autoComplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        </Field>
        <FormError error={action.error} />
        <button type="submit" class="wide" disabled={action.busy}>{action.busy ? "Logging in…" : "Log in"}</button>
      </form>
      <OAuthButtons acceptTerms={false} />
      <p><Link href="/forgot-password">Forgot your password?</Link></p>
      <p>New to Hush? <Link href="/signup">Create an account</Link></p>
    </Page>
  )
}

export const SignupPage = () => {
  const { signedIn } = useSession()
  const action = useAction()
  const [email, setEmail] = useState("")
  const [password, setPassword] = useState("")
  const [terms, setTerms] = useState(false)
  return (
    <Page title="Create your Hush account">
      <form onSubmit={(event) => {
        event.preventDefault()
        if (!terms) {
          action.setError("Please accept the terms of service to create an account.")
          return
        }
        action.run(async () => {
          const answer = await call((api) => api.auth.signup({ payload: { email, password, accept_terms: true } }))
          setCsrfToken(answer.csrf_token)
          signedIn(answer)
          navigate("/dashboard", { replace: true })
        })
      }}>
        <Field label="E-mail address">
          <input type="email" name="email" autoComplete="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        </Field>
        <Field label="Password" hint="At least 8 characters.">
          <input type="password" name="password" autoComplete="new-password" required minLength={8} maxLength={1024} value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        </Field>
        <label class="check">
          <input type="checkbox" name="accept_terms" checked={terms} onChange={(e) => setTerms(e.currentTarget.checked)} />
          <span>I accept the Hush terms of service.</span>
        </label>
        <FormError error={action.error} />
        <button type="submit" class="wide" disabled={action.busy}>{action.busy ? "Creating…" : "Create account"}</button>
      </form>
      {terms && <OAuthButtons acceptTerms={true} />}
      <p>Already have an account? <Link href="/login">Log in</Link></p>
    </Page>
  )
}

export const ForgotPage = () => {
  const action = useAction()
  const [email, setEmail] = useState("")
  const [sent, setSent] = useState(false)
  return (
    <Page title="Reset your password">
      {sent ? (
        <p class="success" role="status">If an account uses {email}, we sent it a link to set a new password. The link works for one hour.</p>
      ) : (
        <form onSubmit={(event) => {
          event.preventDefault()
          action.run(() => call((api) => api.auth.forgotPassword({ payload: { email } }))).then((r) => r && setSent(true))
        }}>
          <Field label="E-mail address">
            <input type="email" name="email" autoComplete="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
          </Field>
          <FormError error={action.error} />
          <button type="submit" class="wide" disabled={action.busy}>Send me a link</button>
        </form>
      )}
      <p><Link href="/login">Back to log in</Link></p>
    </Page>
  )
}

export const ResetPage = () => {
  const { query } = useLocation()
  const token = query.get("token") ?? ""
  const action = useAction()
  const [password, setPassword] = useState("")
  const [done, setDone] = useState(false)
  return (
    <Page title="Choose a new password">
      {token === "" ? <p class="failure" role="alert">This page needs the link from the e-mail. <Link href="/forgot-password">Ask for a new one</Link>.</p>
        : done ? <p class="success" role="status">Your password is changed and every session ended. <Link href="/login">Log in</Link> with the new one.</p>
        : (
          <form onSubmit={(event) => {
            event.preventDefault()
            action.run(() => call((api) => api.auth.resetPassword({ payload: { token, password } }))).then((r) => r && setDone(true))
          }}>
            <Field label="New password" hint="At least 8 characters.">
              <input type="password" name="password" autoComplete="new-password" required minLength={8} maxLength={1024} value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
            </Field>
            <FormError error={action.error} />
            <button type="submit" class="wide" disabled={action.busy}>Set password</button>
          </form>
        )}
    </Page>
  )
}

export const VerifyPage = () => {
  const { query } = useLocation()
  const { session, refresh } = useSession()
  const token = query.get("token") ?? ""
  const [state, setState] = useState<"working" | "done" | string>("working")
  const started = useRef(false)
  useEffect(() => {
    // a token works once: never send it twice
    if (started.current) return
    started.current = true
    if (token === "") {
      setState("This page needs the link from the e-mail.")
      return
    }
    call((api) => api.auth.verifyEmail({ payload: { token } })).then(
      () => {
        setState("done")
        void refresh()
      },
      () => setState("This link is used, expired or not ours. Log in and ask for a new one from the dashboard.")
    )
  }, [token])
  return (
    <Page title="Confirm your e-mail address">
      {state === "working" ? <Loading what="the confirmation" />
        : state === "done" ? (
          <p class="success" role="status">Your e-mail address is confirmed. {session === null ? <Link href="/login">Log in</Link> : <Link href="/dashboard">Go to your dashboard</Link>}</p>
        ) : <p class="failure" role="alert">{state}</p>}
    </Page>
  )
}
