/**
 * Webhook endpoints of the account's live mode (decisions.md, Events): the list, creation (the
 * signing secret shown once), deletion after a confirmation, each endpoint's deliveries with
 * every attempt's status, duration and error, and "send test event", which goes through the
 * same delivery path as real events. The examples do the same with an API key.
 */
import { useEffect, useState } from "preact/hooks"
import { call } from "../api.js"
import type { WebhookDelivery, WebhookEndpoint, WebhookEndpointCreated } from "../../../../core/schema/webhook.js"
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from "../../../../core/domain/enums.js"
import { Link } from "../router.js"
import { Confirmed, Empty, Field, FormError, formatDate, Page, Show, ShownOnce, Table, useAction, useLoad } from "../ui.js"

const EVENT_LABELS: Record<WebhookEventType, string> = {
  "job.succeeded": "A job succeeded",
  "job.failed": "A job failed",
  "job.canceled": "A job was canceled",
  "file.ready": "An upload was checked and is ready",
  "file.rejected": "An upload was rejected"
}

const CreateEndpoint = ({ onCreated }: { readonly onCreated: (created: WebhookEndpointCreated) => void }) => {
  const action = useAction()
  const [url, setUrl] = useState("")
  const [description, setDescription] = useState("")
  const [events, setEvents] = useState<ReadonlySet<WebhookEventType>>(new Set(["job.succeeded", "job.failed"]))
  // one idempotency key per intended endpoint: a double submit makes one
  const [attempt, setAttempt] = useState(() => crypto.randomUUID())
  return (
    <form class="card" onSubmit={(event) => {
      event.preventDefault()
      if (events.size === 0) return action.setError("Pick at least one event.")
      action.run(() => call((api) => api.webhooks.createDashboardWebhookEndpoint({
        payload: { url: url.trim(), events: WEBHOOK_EVENT_TYPES.filter((e) => events.has(e)), description: description.trim() === "" ? null : description.trim() },
        headers: { "idempotency-key": attempt }
      }))).then((created) => {
        if (created === undefined) return
        setUrl("")
        setDescription("")
        setAttempt(crypto.randomUUID())
        onCreated(created)
      })
    }}>
      <h2>Add an endpoint</h2>
      <Field label="Endpoint URL" hint="https:// on a public address; Hush POSTs each event there and expects a 2xx within 10 seconds.">
        <input type="url" name="url" required maxLength={2048} placeholder="https://example.com/hush/webhooks" value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
      </Field>
      <Field label="Description (optional)">
        <input type="text" name="description" maxLength={500} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
      </Field>
      <fieldset>
        <legend>Events</legend>
        {WEBHOOK_EVENT_TYPES.map((type) => (
          <label class="check" key={type}>
            <input type="checkbox" name="events" value={type} checked={events.has(type)} onChange={(e) => {
              const next = new Set(events)
              if (e.currentTarget.checked) next.add(type)
              else next.delete(type)
              setEvents(next)
            }} />
            <span>{EVENT_LABELS[type]} <code>{type}</code></span>
          </label>
        ))}
      </fieldset>
      <FormError error={action.error} />
      <button type="submit" disabled={action.busy}>{action.busy ? "Adding…" : "Add endpoint"}</button>
    </form>
  )
}

const attemptsText = (delivery: WebhookDelivery) =>
  delivery.attempts.length === 0 ? "not sent yet" : delivery.attempts.map((a) =>
    `${a.status_code === null ? "no answer" : `HTTP ${a.status_code}`} in ${a.duration_ms} ms`).join("; ")

const errorsText = (delivery: WebhookDelivery) => delivery.attempts.map((a) => a.error).filter((e) => e !== null).join("; ") || "—"

/** An endpoint's deliveries, newest first; read again while the newest has not been attempted. */
const Deliveries = ({ endpoint, generation }: { readonly endpoint: WebhookEndpoint; readonly generation: number }) => {
  const [page, reload] = useLoad(
    () => call((api) => api.webhooks.listDashboardWebhookDeliveries({ path: { endpoint_id: endpoint.id }, urlParams: { limit: 20 } })),
    [endpoint.id, generation]
  )
  const waiting = page.state === "ready" && page.value.data[0]?.attempts.length === 0
  useEffect(() => {
    if (!waiting) return
    const timer = setTimeout(reload, 1_000)
    return () => clearTimeout(timer)
  }, [page])
  return (
    <section aria-label={`Deliveries to ${endpoint.url}`} class="deliveries">
      <h2>Deliveries to <code>{endpoint.url}</code></h2>
      <Show loaded={page} what="the deliveries" retry={reload}>
        {(p) => p.data.length === 0 ? <Empty>No deliveries yet. Send a test event to try the endpoint.</Empty> : (
          <Table label={`Deliveries to ${endpoint.url}, newest first`} head={["Event", "Status", "Attempts", "Error", "Created"]}
            rows={p.data.map((d) => ({
              key: d.id,
              named: true,
              cells: [<code>{d.event_type}</code>, <span class={`status status-${d.status}`}>{d.status}</span>, attemptsText(d), errorsText(d), formatDate(d.created_at)]
            }))} />
        )}
      </Show>
    </section>
  )
}

const Actions = ({ endpoint, onTested, onShow, onDeleted }: {
  readonly endpoint: WebhookEndpoint
  readonly onTested: () => void
  readonly onShow: () => void
  readonly onDeleted: () => void
}) => {
  const test = useAction()
  return (
    <div class="actions">
      <button type="button" disabled={test.busy} onClick={() =>
        test.run(() => call((api) => api.webhooks.sendDashboardWebhookTest({ path: { endpoint_id: endpoint.id }, headers: {} }))).then((sent) => sent && onTested())}>
        Send test event<span class="visually-hidden"> to {endpoint.url}</span>
      </button>
      <button type="button" class="secondary" onClick={onShow}>Deliveries<span class="visually-hidden"> to {endpoint.url}</span></button>
      <Confirmed label="Delete" name={`Delete ${endpoint.url}`} question={`Delete ${endpoint.url}? Its pending deliveries are not sent.`} yes="Yes, delete"
        action={() => call((api) => api.webhooks.deleteDashboardWebhookEndpoint({ path: { endpoint_id: endpoint.id }, headers: {} }))} done={onDeleted} />
      <FormError error={test.error} />
    </div>
  )
}

const examples = (base: string) => `# the same with an API key that has webhooks:write (HUSH_API_KEY, as the hush CLI reads it)
curl -X POST "${base}/v1/webhook_endpoints" \\
  -H "Authorization: Bearer $HUSH_API_KEY" -H "Content-Type: application/json" \\
  -d '{"url":"https://example.com/hush/webhooks","events":["job.succeeded","job.failed"]}'
curl -X POST "${base}/v1/webhook_endpoints/whe_…/test" -H "Authorization: Bearer $HUSH_API_KEY"
curl "${base}/v1/webhook_endpoints/whe_…/deliveries" -H "Authorization: Bearer $HUSH_API_KEY"`

export const WebhooksPage = () => {
  const [endpoints, reload] = useLoad(() => call((api) => api.webhooks.listDashboardWebhookEndpoints()), [])
  const [created, setCreated] = useState<WebhookEndpointCreated | null>(null)
  const [shown, setShown] = useState<string | null>(null)
  const [generation, setGeneration] = useState(0)
  return (
    <Page title="Webhooks">
      <p>
        Hush POSTs job and file events to your endpoints, signed with each endpoint's <code>whsec_…</code> secret
        (<a href="https://www.standardwebhooks.com/">Standard Webhooks</a>), and retries for more than a day until one is answered with a 2xx.
        These are your live-mode endpoints; test-mode ones are managed with a test key (<Link href="/dashboard/keys">API keys</Link>).
      </p>
      {created !== null && (
        <ShownOnce title={`The signing secret of ${created.url}`} note="Verify each delivery's webhook-signature header with it." what="secret"
          secret={created.secret} onDone={() => setCreated(null)} />
      )}
      <Show loaded={endpoints} what="your endpoints" retry={reload}>
        {(list) => list.data.length === 0 ? <Empty>No endpoints yet.</Empty> : (
          <>
            <Table label="Your live-mode webhook endpoints" head={["Endpoint", "Events", "Status", "Created", "Actions"]}
              rows={list.data.map((endpoint) => ({
                key: endpoint.id,
                named: true,
                cells: [
                  <><code>{endpoint.url}</code>{endpoint.description && <><br /><span class="muted">{endpoint.description}</span></>}</>,
                  endpoint.events.join(", "),
                  <span class={`status status-${endpoint.status}`}>{endpoint.status}</span>,
                  formatDate(endpoint.created_at),
                  <Actions endpoint={endpoint}
                    onTested={() => {
                      setShown(endpoint.id)
                      setGeneration((g) => g + 1)
                    }}
                    onShow={() => setShown(endpoint.id)}
                    onDeleted={() => {
                      if (shown === endpoint.id) setShown(null)
                      reload()
                    }} />
                ]
              }))} />
            {list.data.filter((e) => e.id === shown).map((endpoint) => <Deliveries key={endpoint.id} endpoint={endpoint} generation={generation} />)}
          </>
        )}
      </Show>
      <CreateEndpoint onCreated={(answer) => {
        setCreated(answer)
        reload()
      }} />
      <h2>With the API</h2>
      <pre class="code" tabIndex={0} aria-label="Managing endpoints with curl"><code>{examples(location.origin)}</code></pre>
    </Page>
  )
}
