/** WebhookRepo over PostgreSQL: endpoints and the delivery queue (migrations/0009_webhooks.ts). */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import {
  WebhookAttemptRecord, WebhookDeliveryRecord, WebhookEndpointRecord
} from "../../core/domain/records.js"
import { WebhookRepo } from "../../core/ports/webhooks.js"
import { orFault, refuse } from "./errors.js"
import { int, intOrNull, type Row } from "./rows.js"

const ENDPOINT_COLUMNS = "id, account_id, mode, url, events, description, secret, status, created_at, failing_since, disabled_at"
const DELIVERY_COLUMNS =
  "id, endpoint_id, account_id, mode, event_id, event_type, body, status, attempts, next_attempt_at, lease_owner, lease_expires_at, created_at, finished_at"

const json = (value: unknown): unknown => (typeof value === "string" ? JSON.parse(value) : value)
const strOrNull = (value: unknown): string | null => (value === null || value === undefined ? null : (value as string))

const toEndpoint = (r: Row) =>
  new WebhookEndpointRecord({
    id: r.id as string,
    accountId: r.account_id as string,
    mode: r.mode as WebhookEndpointRecord["mode"],
    url: r.url as string,
    events: json(r.events) as WebhookEndpointRecord["events"],
    description: strOrNull(r.description),
    secret: r.secret as string,
    status: r.status as WebhookEndpointRecord["status"],
    createdAt: int(r.created_at, "created_at"),
    failingSince: intOrNull(r.failing_since, "failing_since"),
    disabledAt: intOrNull(r.disabled_at, "disabled_at")
  })

const endpointParams = (e: WebhookEndpointRecord) => [
  e.id, e.accountId, e.mode, e.url, JSON.stringify(e.events), e.description, e.secret, e.status, e.createdAt, e.failingSince,
  e.disabledAt
]

interface AttemptJson {
  readonly at: number
  readonly status_code: number | null
  readonly duration_ms: number
  readonly error: string | null
}

const toDelivery = (r: Row) =>
  new WebhookDeliveryRecord({
    id: r.id as string,
    endpointId: r.endpoint_id as string,
    accountId: r.account_id as string,
    mode: r.mode as WebhookDeliveryRecord["mode"],
    eventId: r.event_id as string,
    eventType: r.event_type as WebhookDeliveryRecord["eventType"],
    body: r.body as string,
    status: r.status as WebhookDeliveryRecord["status"],
    attempts: (json(r.attempts) as ReadonlyArray<AttemptJson>).map((a) =>
      new WebhookAttemptRecord({ at: a.at, statusCode: a.status_code, durationMs: a.duration_ms, error: a.error })),
    nextAttemptAt: intOrNull(r.next_attempt_at, "next_attempt_at"),
    leaseOwner: strOrNull(r.lease_owner),
    leaseExpiresAt: intOrNull(r.lease_expires_at, "lease_expires_at"),
    createdAt: int(r.created_at, "created_at"),
    finishedAt: intOrNull(r.finished_at, "finished_at")
  })

const deliveryParams = (d: WebhookDeliveryRecord) => [
  d.id, d.endpointId, d.accountId, d.mode, d.eventId, d.eventType, d.body, d.status,
  JSON.stringify(d.attempts.map((a): AttemptJson => ({ at: a.at, status_code: a.statusCode, duration_ms: a.durationMs, error: a.error }))),
  d.nextAttemptAt, d.leaseOwner, d.leaseExpiresAt, d.createdAt, d.finishedAt
]

const placeholders = (n: number, from = 1) => Array.from({ length: n }, (_, i) => `$${i + from}`).join(", ")
const assignments = (columns: string) =>
  columns.split(",").map((c) => c.trim()).slice(1).map((c, i) => `${c} = $${i + 2}`).join(", ")

const ENDPOINT_UPDATE = `UPDATE webhook_endpoints SET ${assignments(ENDPOINT_COLUMNS)} WHERE id = $1 RETURNING 1`
const DELIVERY_UPDATE = `UPDATE webhook_deliveries SET ${assignments(DELIVERY_COLUMNS)} WHERE id = $1 RETURNING 1`

export const PostgresWebhookRepo = Layer.effect(WebhookRepo, Effect.map(SqlClient.SqlClient, (sql) => {
  // uninterruptible, as every statement of repositories.ts: an interrupt stops after it, not during it
  const rows = (operation: string, text: string, params: ReadonlyArray<unknown> = []) =>
    sql.unsafe<Row>(text, params).withoutTransform.pipe(orFault(`WebhookRepo.${operation}`), Effect.uninterruptible)
  const one = (operation: string, text: string, params: ReadonlyArray<unknown>, what: string) =>
    Effect.flatMap(rows(operation, text, params), (rs) => (rs.length === 1 ? Effect.void : refuse(`WebhookRepo.${operation}`, what)))
  const first = <A>(operation: string, text: string, params: ReadonlyArray<unknown>, to: (r: Row) => A) =>
    Effect.map(rows(operation, text, params), (rs) => Option.map(Option.fromNullable(rs[0]), to))
  return {
    insertEndpoint: (e) =>
      Effect.asVoid(rows("insertEndpoint", `INSERT INTO webhook_endpoints (${ENDPOINT_COLUMNS}) VALUES (${placeholders(11)})`, endpointParams(e))),
    updateEndpoint: (e) => one("updateEndpoint", ENDPOINT_UPDATE, endpointParams(e), `no webhook endpoint '${e.id}' to update`),
    getEndpoint: (id) => first("getEndpoint", `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1`, [id], toEndpoint),
    // one statement: atomic outside a transaction too
    deleteEndpoint: (id) =>
      Effect.asVoid(rows(
        "deleteEndpoint",
        `WITH deliveries AS (DELETE FROM webhook_deliveries WHERE endpoint_id = $1) DELETE FROM webhook_endpoints WHERE id = $1`,
        [id]
      )),
    listEndpoints: (accountId, mode) =>
      Effect.map(
        rows("listEndpoints", `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE account_id = $1 AND mode = $2 ORDER BY created_at, id`, [accountId, mode]),
        (rs) => rs.map(toEndpoint)
      ),
    insertDeliveries: (deliveries) =>
      deliveries.length === 0 ? Effect.void : Effect.asVoid(rows(
        "insertDeliveries",
        `INSERT INTO webhook_deliveries (${DELIVERY_COLUMNS}) VALUES ${
          deliveries.map((_, i) => `(${placeholders(14, i * 14 + 1)})`).join(", ")
        }`,
        deliveries.flatMap(deliveryParams)
      )),
    updateDelivery: (d) => one("updateDelivery", DELIVERY_UPDATE, deliveryParams(d), `no webhook delivery '${d.id}' to update`),
    lockDelivery: (id) => first("lockDelivery", `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE id = $1 FOR UPDATE`, [id], toDelivery),
    lockDue: (now, limit) =>
      Effect.map(
        rows(
          "lockDue",
          `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries
            WHERE status = 'pending' AND next_attempt_at <= $1 AND (lease_expires_at IS NULL OR lease_expires_at < $1)
            ORDER BY next_attempt_at, id LIMIT $2 FOR UPDATE SKIP LOCKED`,
          [now, limit]
        ),
        (rs) => rs.map(toDelivery)
      ),
    listDeliveries: (query) => {
      const params: Array<unknown> = [query.endpointId, query.limit]
      let keyset = ""
      if (query.after !== undefined) {
        params.push(query.after.createdAt, query.after.id)
        keyset = "AND (created_at, id) < ($3, $4)"
      }
      return Effect.map(
        rows(
          "listDeliveries",
          `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE endpoint_id = $1 ${keyset}
            ORDER BY created_at DESC, id DESC LIMIT $2`,
          params
        ),
        (rs) => rs.map(toDelivery)
      )
    }
  }
}))
