/** WebhookRepo in memory, over the one MemoryDb (its lock makes a transaction's holder the only claimer). */
import { Effect, HashMap, Layer } from "effect"
import type { WebhookDeliveryRecord } from "../../core/domain/records.js"
import { WebhookRepo } from "../../core/ports/webhooks.js"
import { isDue } from "../../core/rules/webhooks.js"
import { MemoryDb } from "./store.js"

const byId = (a: { readonly id: string }, b: { readonly id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
const newestFirst = (a: WebhookDeliveryRecord, b: WebhookDeliveryRecord) => b.createdAt - a.createdAt || -byId(a, b)

export const layerMemoryWebhookRepo = Layer.effect(WebhookRepo, Effect.map(MemoryDb, (db) => ({
  insertEndpoint: (endpoint) => db.modify((s) => [undefined, { ...s, webhookEndpoints: HashMap.set(s.webhookEndpoints, endpoint.id, endpoint) }]),
  updateEndpoint: (endpoint) => db.modify((s) => [undefined, { ...s, webhookEndpoints: HashMap.set(s.webhookEndpoints, endpoint.id, endpoint) }]),
  getEndpoint: (id) => db.read((s) => HashMap.get(s.webhookEndpoints, id)),
  deleteEndpoint: (id) =>
    db.modify((s) => [undefined, {
      ...s,
      webhookEndpoints: HashMap.remove(s.webhookEndpoints, id),
      webhookDeliveries: HashMap.filter(s.webhookDeliveries, (d) => d.endpointId !== id)
    }]),
  listEndpoints: (accountId, mode) =>
    db.read((s) =>
      [...HashMap.values(s.webhookEndpoints)].filter((e) => e.accountId === accountId && e.mode === mode)
        .sort((a, b) => a.createdAt - b.createdAt || byId(a, b))),
  insertDeliveries: (deliveries) =>
    db.modify((s) => [undefined, {
      ...s,
      webhookDeliveries: deliveries.reduce((map, d) => HashMap.set(map, d.id, d), s.webhookDeliveries)
    }]),
  updateDelivery: (delivery) => db.modify((s) => [undefined, { ...s, webhookDeliveries: HashMap.set(s.webhookDeliveries, delivery.id, delivery) }]),
  lockDelivery: (id) => db.read((s) => HashMap.get(s.webhookDeliveries, id)),
  lockDue: (now, limit) =>
    db.read((s) =>
      [...HashMap.values(s.webhookDeliveries)].filter((d) => isDue(d, now))
        .sort((a, b) => a.nextAttemptAt! - b.nextAttemptAt! || byId(a, b)).slice(0, limit)),
  listDeliveries: (query) =>
    db.read((s) =>
      [...HashMap.values(s.webhookDeliveries)].filter((d) =>
        d.endpointId === query.endpointId &&
        (query.after === undefined || d.createdAt < query.after.createdAt || (d.createdAt === query.after.createdAt && d.id < query.after.id))
      ).sort(newestFirst).slice(0, query.limit))
})))
