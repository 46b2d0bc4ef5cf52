/** API keys: the list, creation (the secret is shown once) and revocation with a confirmation. */
import { useState } from "preact/hooks"
import { call } from "../api.js"
import type { KeyCreateResponse, KeyOut } from "../../../../core/schema/dashboard.js"
import type { Mode, Scope } from "../../../../core/domain/enums.js"
import { Confirmed, Empty, Field, FormError, formatDate, Page, type Row, Show, ShownOnce, Table, useAction, useLoad } from "../ui.js"

const SCOPES: ReadonlyArray<readonly [Scope, string]> = [
  ["files:write", "Upload files"],
  ["jobs:write", "Start jobs"],
  ["jobs:read", "Read jobs and download outputs"],
  ["credits:read", "Read credit"],
  ["webhooks:write", "Manage webhook endpoints"]
]

const SecretOnce = ({ created, onDone }: { readonly created: KeyCreateResponse; readonly onDone: () => void }) =>
  created.secret === null
    ? <p class="notice" role="status">Key {created.key.name || created.key.prefix_display} was already created; its secret was shown then and cannot be shown again.</p>
    : <ShownOnce title={`Your new ${created.key.mode} key`} note="Hush keeps only a hash of it." what="key" secret={created.secret} onDone={onDone} />

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

const keyLabel = (item: KeyOut) => item.name || `${item.prefix_display}…${item.last_four}`

const keyRow = (item: KeyOut, onRevoked: () => void): Row => ({
  key: item.id,
  named: true,
  cells: [
    item.name || <span class="muted">(no name)</span>,
    item.mode,
    <code>{item.prefix_display}…{item.last_four}</code>,
    item.scopes.join(", "),
    formatDate(item.created_at),
    item.last_used_at === null ? "never" : formatDate(item.last_used_at),
    item.revoked_at !== null ? <span>Revoked {formatDate(item.revoked_at)}</span> : (
      <Confirmed
        label="Revoke"
        name={`Revoke ${keyLabel(item)}`}
        question={`Revoke ${keyLabel(item)}? Requests with it will fail.`}
        yes="Yes, revoke"
        action={() => call((api) => api.dashboard.revokeKey({ path: { key_id: item.id }, headers: {} }))}
        done={onRevoked}
      />
    )
  ]
})

export const KeysPage = () => {
  const [keys, reload] = useLoad(() => call((api) => api.dashboard.listKeys()), [])
  const [created, setCreated] = useState<KeyCreateResponse | null>(null)
  return (
    <Page title="API keys">
      {created !== null && <SecretOnce created={created} onDone={() => setCreated(null)} />}
      <Show loaded={keys} what="your keys" retry={reload}>
        {(list) => list.data.length === 0 ? <Empty>No keys yet. Create a test key to try the API for free.</Empty> : (
          <Table label="Your API keys" head={["Name", "Mode", "Key", "Permissions", "Created", "Last used", "Status"]}
            rows={list.data.map((item) => keyRow(item, reload))} />
        )}
      </Show>
      <CreateKey onCreated={(answer) => {
        setCreated(answer)
        reload()
      }} />
    </Page>
  )
}
