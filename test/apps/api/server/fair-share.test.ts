/** The fair sharing of the validation decoders (apps/api/server/fair-share.ts), with tasks the test holds and releases. */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { type FairShare, makeFairShare } from "../../../../apps/api/server/fair-share.js"

/** Submits tasks and records which start; each holds its slot until released. */
const harness = (share: FairShare) => {
  const started: Array<string> = []
  const gates = new Map<string, Deferred.Deferred<void>>()
  const submit = (tenant: string, name: string) =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      gates.set(name, gate)
      return yield* Effect.fork(share.run(tenant, Effect.zipRight(Effect.sync(() => void started.push(name)), Deferred.await(gate))))
    })
  const finish = (name: string) => Effect.zipRight(Deferred.succeed(gates.get(name)!, undefined), Effect.yieldNow({ priority: 0 }))
  const settle = Effect.repeatN(Effect.yieldNow(), 20)
  return { started, submit, finish, settle }
}

describe("FairShare", () => {
  it.effect("alone, a tenant uses every slot; a newcomer gets the next free one ahead of that tenant's backlog", () =>
    Effect.gen(function*() {
      const h = harness(yield* makeFairShare(2))
      for (const name of ["a1", "a2", "a3", "a4"]) yield* h.submit("A", name)
      yield* h.settle
      expect(h.started).toEqual(["a1", "a2"])
      yield* h.submit("B", "b1")
      yield* h.submit("C", "c1")
      yield* h.settle
      yield* h.finish("a1")
      yield* h.settle
      expect(h.started).toEqual(["a1", "a2", "b1"])
      yield* h.finish("a2")
      yield* h.settle
      expect(h.started).toEqual(["a1", "a2", "b1", "c1"])
      // B and C hold one each, A none: A's backlog, oldest first
      yield* h.finish("b1")
      yield* h.settle
      expect(h.started).toEqual(["a1", "a2", "b1", "c1", "a3"])
      // B holds none, A one (a3): B's new request goes ahead of A's a4
      yield* h.submit("B", "b2")
      yield* h.finish("c1")
      yield* h.settle
      expect(h.started).toEqual(["a1", "a2", "b1", "c1", "a3", "b2"])
    }))

  it.effect("a waiter interrupted leaves the line; a running task interrupted frees its slot", () =>
    Effect.gen(function*() {
      const h = harness(yield* makeFairShare(1))
      const running = yield* h.submit("A", "a1")
      const waiting = yield* h.submit("B", "b1")
      yield* h.submit("C", "c1")
      yield* h.settle
      yield* Fiber.interrupt(waiting)
      yield* Fiber.interrupt(running)
      yield* h.settle
      expect(h.started).toEqual(["a1", "c1"])
    }))

  it.effect("a task's result and failure come back to its caller", () =>
    Effect.gen(function*() {
      const share = yield* makeFairShare(1)
      expect(yield* share.run("A", Effect.succeed(42))).toBe(42)
      expect(yield* Effect.flip(share.run("A", Effect.fail("no")))).toBe("no")
      expect(yield* share.run("B", Effect.succeed("still a slot"))).toBe("still a slot")
    }))
})
