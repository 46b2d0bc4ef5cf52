/** The account: its name, the address and its verification, the password. */
import { useState } from "preact/hooks"
import { call, setCsrfToken } from "../api.js"
import { useSession } from "../session.js"
import { Field, FormError, Page, Show, useAction, useLoad } from "../ui.js"

const NameForm = ({ initial, onSaved }: { readonly initial: string; readonly onSaved: () => void }) => {
  const [name, setName] = useState(initial)
  const [saved, setSaved] = useState(false)
  const action = useAction()
  return (
    <form class="card" onSubmit={(event) => {
      event.preventDefault()
      setSaved(false)
      action.run(() => call((api) => api.dashboard.updateAccount({ payload: { name }, headers: {} }))).then((r) => {
        if (r === undefined) return
        setSaved(true)
        onSaved()
      })
    }}>
      <h2>Account name</h2>
      <Field label="Name" hint="Shown on receipts and to your team.">
        <input type="text" name="account_name" maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </Field>
      <FormError error={action.error} />
      {saved && <p class="success" role="status">Saved.</p>}
      <button type="submit" disabled={action.busy}>Save name</button>
    </form>
  )
}

const PasswordForm = () => {
  const [password, setPassword] = useState("")
  const [next, setNext] = useState("")
  const [done, setDone] = useState(false)
  const action = useAction()
  return (
    <form class="card" onSubmit={(event) => {
      event.preventDefault()
      setDone(false)
      action.run(() => call((api) => api.session.changePassword({ payload: { password, new_password: next }, headers: {} }))).then((r) => {
        if (r === undefined) return
        // a new session, and with it a new CSRF token
        setCsrfToken(r.csrf_token)
        setPassword("")
        setNext("")
        setDone(true)
      })
    }}>
      <h2>Password</h2>
      <Field label="Current password">
        <input type="password" name="password" autoComplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
      </Field>
      <Field label="New password" hint="At least 8 characters. Every other session is logged out.">
        <input type="password" name="new_password" autoComplete="new-password" required minLength={8} maxLength={1024} value={next} onInput={(e) => setNext(e.currentTarget.value)} />
      </Field>
      <FormError error={action.error} />
      {done && <p class="success" role="status">Password changed.</p>}
      <button type="submit" disabled={action.busy}>Change password</button>
    </form>
  )
}

export const AccountPage = () => {
  const { session, refresh } = useSession()
  const [account, reload] = useLoad(() => call((api) => api.dashboard.getAccount()), [])
  return (
    <Page title="Account">
      <Show loaded={account} what="your account" retry={reload}>
        {(a) => (
          <>
            <dl class="details">
              <dt>E-mail</dt><dd>{session?.user.email} {session?.user.verified ? "(confirmed)" : "(not confirmed yet)"}</dd>
              <dt>Status</dt><dd>{a.status}</dd>
              <dt>Account id</dt><dd><code>{a.id}</code></dd>
              <dt>Terms accepted</dt><dd>version {a.terms_version}</dd>
            </dl>
            <NameForm initial={a.name} onSaved={() => void refresh()} />
          </>
        )}
      </Show>
      <PasswordForm />
    </Page>
  )
}
