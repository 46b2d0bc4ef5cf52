/** Webhook endpoints: a page of decisions.md whose API (issue: outbound webhooks) this deployment does not have yet. */
import { Page } from "../ui.js"

export const WebhooksPage = () => (
  <Page title="Webhooks">
    <p class="empty">
      Webhook endpoints are not available on this deployment yet. Until they are, poll
      <code> GET /v1/jobs/{"{id}"}</code> for a job's progress (see <a href="/docs">the API reference</a>).
    </p>
  </Page>
)
