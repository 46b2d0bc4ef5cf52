/** The WebhookRepo contract: endpoints and the delivery queue, written once for every adapter. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, type Layer } from "effect"
import { WebhookAttemptRecord, WebhookDeliveryRecord, WebhookEndpointRecord } from "../../core/domain/records.js"
import { Transactor, transactionally } from "../../core/ports/transactor.js"
import { WebhookRepo } from "../../core/ports/webhooks.js"
import { fixtureId, HOUR, SECOND, T0 } from "./fixtures.js"

type Overrides<A> = Partial<{ -readonly [K in keyof A]: A[K] }>

export const makeEndpoint = (o: Overrides<WebhookEndpointRecord> = {}) =>
  new WebhookEndpointRecord({
    id: fixtureId("whe"),
    accountId: "acct_fixture",
    mode: "live",
    url: "https://hooks.example.com/hush?x=ü",
    events: ["job.succeeded", "file.ready"],
    description: "Production receiver",
    secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    status: "enabled",
    createdAt: T0,
    failingSince: null,
    disabledAt: null,
    ...o
  } as ConstructorParameters<typeof WebhookEndpointRecord>[0])

export const makeDelivery = (endpoint: WebhookEndpointRecord, o: Overrides<WebhookDeliveryRecord> = {}) =>
  new WebhookDeliveryRecord({
    id: fixtureId("whd"),
    endpointId: endpoint.id,
    accountId: endpoint.accountId,
    mode: endpoint.mode,
    eventId: fixtureId("evt"),
    eventType: "job.succeeded",
    body: JSON.stringify({ id: "evt_1", type: "job.succeeded", data: { name: "naïve ✓" } }),
    status: "pending",
    attempts: [],
    nextAttemptAt: T0,
    leaseOwner: null,
    leaseExpiresAt: null,
    createdAt: T0,
    finishedAt: null,
    ...o
  } as ConstructorParameters<typeof WebhookDeliveryRecord>[0])

const attempt = (o: Partial<ConstructorParameters<typeof WebhookAttemptRecord>[0]> = {}) =>
  new WebhookAttemptRecord({ at: T0 + SECOND, statusCode: 503, durationMs: 1_234, error: "HTTP 503", ...o })

export const webhookContract = (name: string, makeLayer: () => Layer.Layer<WebhookRepo | Transactor, unknown, never>) => {
  describe(`${name} WebhookRepo`, () => {
    const run = <A, E>(body: Effect.Effect<A, E, WebhookRepo | Transactor>) => Effect.provide(body, makeLayer())

    it.effect("stores endpoints field for field, lists them per account and mode oldest first, updates and deletes", () =>
      run(Effect.gen(function*() {
        const repo = yield* WebhookRepo
        const second = makeEndpoint({ createdAt: T0 + 1 })
        const first = makeEndpoint({ description: null })
        const otherMode = makeEndpoint({ mode: "test" })
        const otherAccount = makeEndpoint({ accountId: "acct_other" })
        for (const e of [second, first, otherMode, otherAccount]) yield* repo.insertEndpoint(e)
        expect(yield* repo.getEndpoint(first.id)).toEqual(Option.some(first))
        expect(yield* repo.listEndpoints("acct_fixture", "live")).toEqual([first, second])
        const disabled = new WebhookEndpointRecord({ ...second, status: "disabled", failingSince: T0 + 5, disabledAt: T0 + 9 })
        yield* repo.updateEndpoint(disabled)
        expect(yield* repo.getEndpoint(second.id)).toEqual(Option.some(disabled))
        yield* repo.deleteEndpoint(first.id)
        expect(yield* repo.getEndpoint(first.id)).toEqual(Option.none())
        expect((yield* repo.listEndpoints("acct_fixture", "live")).map((e) => e.id)).toEqual([second.id])
      })))

    it.effect("stores deliveries with their attempts; deleting the endpoint deletes its deliveries", () =>
      run(Effect.gen(function*() {
        const repo = yield* WebhookRepo
        const endpoint = makeEndpoint()
        const other = makeEndpoint()
        yield* repo.insertEndpoint(endpoint)
        yield* repo.insertEndpoint(other)
        const a = makeDelivery(endpoint)
        const b = makeDelivery(other)
        yield* repo.insertDeliveries([a, b])
        yield* repo.insertDeliveries([])
        expect(yield* repo.lockDelivery(a.id)).toEqual(Option.some(a))
        const retried = new WebhookDeliveryRecord({
          ...a, attempts: [attempt(), attempt({ at: T0 + 6 * SECOND, statusCode: null, error: "no answer within 10 s" })],
          nextAttemptAt: T0 + HOUR
        })
        yield* repo.updateDelivery(retried)
        expect(yield* repo.lockDelivery(a.id)).toEqual(Option.some(retried))
        yield* repo.deleteEndpoint(endpoint.id)
        expect(yield* repo.lockDelivery(a.id)).toEqual(Option.none())
        expect(yield* repo.lockDelivery(b.id)).toEqual(Option.some(b))
      })))

    it.effect("lockDue: pending, due, lease free or lapsed; earliest due first; limited", () =>
      run(Effect.gen(function*() {
        const repo = yield* WebhookRepo
        const endpoint = makeEndpoint()
        yield* repo.insertEndpoint(endpoint)
        const dueLater = makeDelivery(endpoint, { nextAttemptAt: T0 - SECOND })
        const dueFirst = makeDelivery(endpoint, { nextAttemptAt: T0 - HOUR })
        const notYet = makeDelivery(endpoint, { nextAttemptAt: T0 + SECOND })
        const leased = makeDelivery(endpoint, { nextAttemptAt: T0 - HOUR, leaseOwner: "w", leaseExpiresAt: T0 + SECOND })
        const lapsed = makeDelivery(endpoint, { nextAttemptAt: T0 - 2 * HOUR, leaseOwner: "w", leaseExpiresAt: T0 - 1 })
        const done = makeDelivery(endpoint, { status: "succeeded", nextAttemptAt: null, finishedAt: T0 - HOUR, attempts: [attempt({ statusCode: 200, error: null })] })
        yield* repo.insertDeliveries([dueLater, dueFirst, notYet, leased, lapsed, done])
        const due = yield* transactionally(repo.lockDue(T0, 10))
        expect(due.map((d) => d.id)).toEqual([lapsed.id, dueFirst.id, dueLater.id])
        expect((yield* transactionally(repo.lockDue(T0, 2))).map((d) => d.id)).toEqual([lapsed.id, dueFirst.id])
      })))

    it.effect("listDeliveries: one endpoint's, newest first, by keyset", () =>
      run(Effect.gen(function*() {
        const repo = yield* WebhookRepo
        const endpoint = makeEndpoint()
        const other = makeEndpoint()
        yield* repo.insertEndpoint(endpoint)
        yield* repo.insertEndpoint(other)
        const old = makeDelivery(endpoint, { createdAt: T0 - HOUR })
        const twinA = makeDelivery(endpoint, { id: "whd_a", createdAt: T0 })
        const twinB = makeDelivery(endpoint, { id: "whd_b", createdAt: T0 })
        yield* repo.insertDeliveries([old, twinA, twinB, makeDelivery(other)])
        expect((yield* repo.listDeliveries({ endpointId: endpoint.id, limit: 10 })).map((d) => d.id)).toEqual(["whd_b", "whd_a", old.id])
        expect((yield* repo.listDeliveries({ endpointId: endpoint.id, limit: 10, after: { createdAt: T0, id: "whd_b" } })).map((d) => d.id))
          .toEqual(["whd_a", old.id])
        expect((yield* repo.listDeliveries({ endpointId: endpoint.id, limit: 1 })).map((d) => d.id)).toEqual(["whd_b"])
      })))

    it.live("concurrent claimers never lock the same delivery", () =>
      run(Effect.gen(function*() {
        const repo = yield* WebhookRepo
        const endpoint = makeEndpoint()
        yield* repo.insertEndpoint(endpoint)
        const all = Array.from({ length: 6 }, (_, i) => makeDelivery(endpoint, { nextAttemptAt: T0 - i }))
        yield* repo.insertDeliveries(all)
        const claim = (owner: string) =>
          transactionally(Effect.gen(function*() {
            const due = yield* repo.lockDue(T0, 3)
            for (const d of due) yield* repo.updateDelivery(new WebhookDeliveryRecord({ ...d, leaseOwner: owner, leaseExpiresAt: T0 + HOUR }))
            // hold the locks while the other claimer looks
            yield* Effect.sleep("100 millis")
            return due.map((d) => d.id)
          }))
        const [a, b] = yield* Effect.all([claim("a"), claim("b")], { concurrency: 2 })
        expect(a).toHaveLength(3)
        expect(b).toHaveLength(3)
        expect(new Set([...a, ...b]).size).toBe(6)
      })))

    it.effect("a transaction that fails leaves no delivery behind", () =>
      run(Effect.gen(function*() {
        const repo = yield* WebhookRepo
        const endpoint = makeEndpoint()
        yield* repo.insertEndpoint(endpoint)
        const d = makeDelivery(endpoint)
        const failed = yield* Effect.either(transactionally(Effect.zipRight(repo.insertDeliveries([d]), Effect.fail("boom"))))
        expect(failed._tag).toBe("Left")
        expect(yield* repo.lockDelivery(d.id)).toEqual(Option.none())
      })))
  })
}
