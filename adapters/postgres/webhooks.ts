/** WebhookRepo over PostgreSQL: endpoints and the delivery queue (migrations/0009_webhooks.ts). */
import { Effect, Layer } from "effect"
import {
  WebhookAttemptRecord, WebhookDeliveryRecord, WebhookEndpointRecord
} from "../../core/domain/records.js"
import { WebhookRepo } from "../../core/ports/webhooks.js"
import { repositoryStatements } from "./statements.js"
import { int, json, orNull, statement, table, text } from "./table.js"

const webhookEndpoints = table("webhook_endpoints", WebhookEndpointRecord, {
  id: text("id"),
  accountId: text("account_id"),
  mode: text("mode"),
  url: text("url"),
  events: json("events"),
  description: orNull(text("description")),
  secret: text("secret"),
  status: text("status"),
  createdAt: int("created_at"),
  failingSince: orNull(int("failing_since")),
  disabledAt: orNull(int("disabled_at"))
})

/** An attempt as the `attempts` jsonb holds it. */
interface AttemptJson {
  readonly at: number
  readonly status_code: number | null
  readonly duration_ms: number
  readonly error: string | null
}

const attempts = json<ReadonlyArray<WebhookAttemptRecord>>("attempts", {
  read: (parsed) =>
    (parsed as ReadonlyArray<AttemptJson>).map((a) =>
      new WebhookAttemptRecord({ at: a.at, statusCode: a.status_code, durationMs: a.duration_ms, error: a.error }, { disableValidation: true })
    ),
  write: (value) => value.map((a): AttemptJson => ({ at: a.at, status_code: a.statusCode, duration_ms: a.durationMs, error: a.error }))
})

const webhookDeliveries = table("webhook_deliveries", WebhookDeliveryRecord, {
  id: text("id"),
  endpointId: text("endpoint_id"),
  accountId: text("account_id"),
  mode: text("mode"),
  eventId: text("event_id"),
  eventType: text("event_type"),
  body: text("body"),
  status: text("status"),
  attempts,
  nextAttemptAt: orNull(int("next_attempt_at")),
  leaseOwner: orNull(text("lease_owner")),
  leaseExpiresAt: orNull(int("lease_expires_at")),
  createdAt: int("created_at"),
  finishedAt: orNull(int("finished_at"))
})

const ENDPOINT_BY_ID = statement(["id"], (p) => `SELECT ${webhookEndpoints.columns} FROM webhook_endpoints WHERE id = ${p.id}`)
/** One statement: atomic outside a transaction too. */
const ENDPOINT_DELETE = statement(["id"], (p) =>
  `WITH deliveries AS (DELETE FROM webhook_deliveries WHERE endpoint_id = ${p.id}) DELETE FROM webhook_endpoints WHERE id = ${p.id}`)
const ENDPOINTS_OF = statement(["accountId", "mode"], (p) =>
  `SELECT ${webhookEndpoints.columns} FROM webhook_endpoints WHERE account_id = ${p.accountId} AND mode = ${p.mode} ORDER BY created_at, id`)
const DELIVERY_LOCK = statement(["id"], (p) => `SELECT ${webhookDeliveries.columns} FROM webhook_deliveries WHERE id = ${p.id} FOR UPDATE`)
const DELIVERIES_DUE = statement(["now", "limit"], (p) =>
  `SELECT ${webhookDeliveries.columns} FROM webhook_deliveries
    WHERE status = 'pending' AND next_attempt_at <= ${p.now} AND (lease_expires_at IS NULL OR lease_expires_at < ${p.now})
    ORDER BY next_attempt_at, id LIMIT ${p.limit} FOR UPDATE SKIP LOCKED`)
const deliveriesPage = (after: boolean) =>
  statement(["endpointId", "limit", "afterCreatedAt", "afterId"], (p) =>
    `SELECT ${webhookDeliveries.columns} FROM webhook_deliveries
    WHERE endpoint_id = ${p.endpointId} ${after ? `AND (created_at, id) < (${p.afterCreatedAt}, ${p.afterId})` : ""}
    ORDER BY created_at DESC, id DESC LIMIT ${p.limit}`)
const DELIVERIES_PAGE = deliveriesPage(false)
const DELIVERIES_PAGE_AFTER = deliveriesPage(true)

export const layerPostgresWebhookRepo = Layer.effect(WebhookRepo, Effect.map(repositoryStatements, (q) => ({
  insertEndpoint: (e) => Effect.asVoid(q.rows("WebhookRepo.insertEndpoint", webhookEndpoints.insert, webhookEndpoints.params(e))),
  updateEndpoint: (e) =>
    q.one("WebhookRepo.updateEndpoint", webhookEndpoints.update, webhookEndpoints.params(e), `no webhook endpoint '${e.id}' to update`),
  getEndpoint: (id) => q.first("WebhookRepo.getEndpoint", ENDPOINT_BY_ID, [id], webhookEndpoints.decode),
  deleteEndpoint: (id) => Effect.asVoid(q.rows("WebhookRepo.deleteEndpoint", ENDPOINT_DELETE, [id])),
  listEndpoints: (accountId, mode) => q.many("WebhookRepo.listEndpoints", ENDPOINTS_OF, [accountId, mode], webhookEndpoints.decode),
  insertDeliveries: (deliveries) =>
    deliveries.length === 0 ? Effect.void : Effect.asVoid(q.rows(
      "WebhookRepo.insertDeliveries",
      webhookDeliveries.insertMany(deliveries.length),
      deliveries.flatMap(webhookDeliveries.params)
    )),
  updateDelivery: (d) =>
    q.one("WebhookRepo.updateDelivery", webhookDeliveries.update, webhookDeliveries.params(d), `no webhook delivery '${d.id}' to update`),
  lockDelivery: (id) => q.first("WebhookRepo.lockDelivery", DELIVERY_LOCK, [id], webhookDeliveries.decode),
  lockDue: (now, limit) => q.many("WebhookRepo.lockDue", DELIVERIES_DUE, [now, limit], webhookDeliveries.decode),
  listDeliveries: (query) =>
    query.after === undefined
      ? q.many("WebhookRepo.listDeliveries", DELIVERIES_PAGE, [query.endpointId, query.limit], webhookDeliveries.decode)
      : q.many(
        "WebhookRepo.listDeliveries",
        DELIVERIES_PAGE_AFTER,
        [query.endpointId, query.limit, query.after.createdAt, query.after.id],
        webhookDeliveries.decode
      )
})))
