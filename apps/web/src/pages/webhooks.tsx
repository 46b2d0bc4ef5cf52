/**
 * Webhook endpoints. The API manages them with an API key (`/v1/webhook_endpoints`, scope
 * `webhooks:write`); the dashboard API has no session endpoints for them yet, so this page
 * says how, rather than show a list it cannot read.
 */
import { Link } from "../router.js"
import { Page } from "../ui.js"

export const WebhooksPage = () => (
  <Page title="Webhooks">
    <p>
      Hush can push job and file events to your own HTTPS endpoints (Standard Webhooks, signed with the
      endpoint's <code>whsec_…</code> secret). Endpoints are managed with an API key that has the
      <code> webhooks:write</code> permission (<Link href="/dashboard/keys">create one</Link>):
    </p>
    <pre class="code" tabIndex={0} aria-label="Creating an endpoint with curl"><code>{`curl -X POST https://…/v1/webhook_endpoints \
  -H "Authorization: Bearer $HUSH_KEY" -H "Content-Type: application/json" \
  -d '{"url":"https://example.com/hush","events":["job.succeeded","job.failed"]}'`}</code></pre>
    <p class="empty">Listing and editing endpoints here is not available yet: see <a href="/docs">the API reference</a>.</p>
  </Page>
)
