/** API keys: the list, creation (the secret is shown once) and revocation with a confirmation. */
import { useEffect, useRef, useState } from "preact/hooks"
import { call } from "../api.js"
import type { KeyCreateResponse, KeyOut } from "../../../../core/schema/dashboard.js"
import type { Mode, Scope } from "../../../../core/domain/enums.js"
import { Empty, Field, FormError, formatDate, Page, Show, Table, useAction, useLoad } from "../ui.js"

const SCOPES: ReadonlyArray<readonly [Scope, string]> = [
  ["files:write", "Upload files"],
  ["jobs:write", "Start jobs"],
  ["jobs:read", "Read jobs and download outputs"],
  ["credits:read", "Read credit"],
  ["webhooks:write", "Manage webhook endpoints"]
]

const SecretOnce = ({ created, onDone }: { readonly created: KeyCreateResponse; readonly onDone: () => void }) => {
  const [copied, setCopied] = useState<string | null>(null)
  const box = useRef<HTMLDivElement>(null)
  useEffect(() => box.current?.focus(), [])
  if (created.secret === null) {
    return <p class="notice" role="status">Key {created.key.name || created.key.prefix_display} was already created; its secret was shown then and cannot be shown again.</p>
  }
  const secret = created.secret
  return (
    <div class="secret" ref={box} tabIndex={-1} role="region" aria-label="Your new API key">
      <h2>Your new {created.key.mode} key</h2>
      <p><strong>Copy it now: it is shown only once.</strong> Hush keeps only a hash of it.</p>
      <code class="key" data-testid="new-secret">{secret}</code>
      <div class="row">
        <button type="button" onClick={() =>
          navigator.clipboard.writeText(secret).then(() => setCopied("Copied."), () => setCopied("Could not copy: select the key and copy it by hand."))}>
          Copy key
        </button>
        <button type="button" class="secondary" onClick={onDone}>I have stored it</button>
      </div>
      {copied && <p role="status">{copied}</p>}
    </div>
  )
}

const CreateKey = ({ onCreated }: { readonly onCreated: (created: KeyCreateResponse) => void }) => {
  const action = useAction()
  const [mode, setMode] = useState<Mode>("test")
  const [name, setName] = useState("")
  const [scopes, setScopes] = useState<ReadonlySet<Scope>>(new Set(SCOPES.map(([s]) => s)))
  // one idempotency key per intended creation: a double submit or a retry makes one key
  const [attempt, setAttempt] = useState(() => crypto.randomUUID())
  return (
    <form class="card" onSubmit={(event) => {
      event.preventDefault()
      if (scopes.size === 0) {
        action.setError("Pick at least one permission.")
        return
      }
      const all = scopes.size === SCOPES.length
      action.run(() => call((api) => api.dashboard.createKey({
        payload: { mode, name, scopes: all ? null : [...scopes] },
        headers: { "idempotency-key": attempt }
      }))).then((created) => {
        if (created === undefined) return
        setName("")
        setAttempt(crypto.randomUUID())
        onCreated(created)
      })
    }}>
      <h2>Create a key</h2>
      <fieldset>
        <legend>Mode</legend>
        {(["test", "live"] as const).map((m) => (
          <label class="check" key={m}>
            <input type="radio" name="mode" value={m} checked={mode === m} onChange={() => setMode(m)} />
            <span>{m === "test" ? "Test: free, sample output, no credit used" : "Live: real denoising, billed from credit"}</span>
          </label>
        ))}
      </fieldset>
      <Field label="Name (optional)">
        <input type="text" name="name" maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </Field>
      <fieldset>
        <legend>Permissions</legend>
        {SCOPES.map(([scope, label]) => (
          <label class="check" key={scope}>
            <input type="checkbox" name="scopes" value={scope} checked={scopes.has(scope)} onChange={(e) => {
              const next = new Set(scopes)
              if (e.currentTarget.checked) next.add(scope)
              else next.delete(scope)
              setScopes(next)
            }} />
            <span>{label} <code>{scope}</code></span>
          </label>
        ))}
      </fieldset>
      <FormError error={action.error} />
      <button type="submit" disabled={action.busy}>{action.busy ? "Creating…" : `Create ${mode} key`}</button>
    </form>
  )
}

const KeyRow = ({ item, onRevoked }: { readonly item: KeyOut; readonly onRevoked: () => void }) => {
  const [confirming, setConfirming] = useState(false)
  const action = useAction()
  const confirm = useRef<HTMLButtonElement>(null)
  useEffect(() => {
    if (confirming) confirm.current?.focus()
  }, [confirming])
  const label = item.name || `${item.prefix_display}…${item.last_four}`
  return (
    <tr>
      <td>{item.name || <span class="muted">(no name)</span>}</td>
      <td>{item.mode}</td>
      <td><code>{item.prefix_display}…{item.last_four}</code></td>
      <td>{item.scopes.join(", ")}</td>
      <td>{formatDate(item.created_at)}</td>
      <td>{item.last_used_at === null ? "never" : formatDate(item.last_used_at)}</td>
      <td>
        {item.revoked_at !== null ? <span>Revoked {formatDate(item.revoked_at)}</span>
          : confirming ? (
            <div class="confirm" role="group" aria-label={`Confirm revoking ${label}`}>
              <span>Revoke {label}? Requests with it will fail.</span>
              <button type="button" class="danger" ref={confirm} disabled={action.busy} onClick={() =>
                action.run(() => call((api) => api.dashboard.revokeKey({ path: { key_id: item.id }, headers: {} }))).then((r) => r && onRevoked())}>
                Yes, revoke
              </button>
              <button type="button" class="secondary" onClick={() => setConfirming(false)}>Cancel</button>
              <FormError error={action.error} />
            </div>
          ) : <button type="button" class="secondary" aria-label={`Revoke ${label}`} onClick={() => setConfirming(true)}>Revoke</button>}
      </td>
    </tr>
  )
}

export const KeysPage = () => {
  const [keys, reload] = useLoad(() => call((api) => api.dashboard.listKeys()), [])
  const [created, setCreated] = useState<KeyCreateResponse | null>(null)
  return (
    <Page title="API keys">
      {created !== null && <SecretOnce created={created} onDone={() => setCreated(null)} />}
      <Show loaded={keys} what="your keys" retry={reload}>
        {(list) => list.data.length === 0 ? <Empty>No keys yet. Create a test key to try the API for free.</Empty> : (
          <Table label="Your API keys" head={["Name", "Mode", "Key", "Permissions", "Created", "Last used", "Status"]}>
            {list.data.map((item) => <KeyRow key={item.id} item={item} onRevoked={reload} />)}
          </Table>
        )}
      </Show>
      <CreateKey onCreated={(answer) => {
        setCreated(answer)
        reload()
      }} />
    </Page>
  )
}
