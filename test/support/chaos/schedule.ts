/**
 * The chaos schedule: faults, one at a time, each held a few seconds and then healed, with a
 * pause between. Each kind of every proxy (latency with jitter, bandwidth, resets mid-stream, a
 * black hole, refusal, a cut after N bytes, a COMMIT whose answer is lost) on one process's link
 * or on the whole fleet's; PostgreSQL restarted; Redis stopped and started; Hush processes
 * killed (SIGKILL) or stopped (SIGTERM) and started again after a pause. The short schedule
 * (CI) runs every kind once in a fixed order; a long one repeats them shuffled, on random
 * targets, until its time is up. A seed makes a run repeatable.
 */
import type { FaultSettings } from "../fault-proxy.js"
import type { Dependency, Fleet, Member } from "./fleet.js"

export interface Fault {
  /** What it did, for the log and the report (e.g. `postgres black hole on worker-1`). */
  readonly label: string
  /** The kind, for the report's count. */
  readonly kind: string
  readonly run: (fleet: Fleet) => Promise<void>
}

/** A seeded generator (mulberry32), so that a run can be repeated. */
export const seeded = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

type Target = Member | "all"

const proxiesOf = (fleet: Fleet, dependency: Dependency, target: Target) =>
  target === "all" ? fleet.proxiesOf(dependency) : target.proxies[dependency] === undefined ? [] : [target.proxies[dependency]!]

const targetName = (target: Target) => (target === "all" ? "every process" : target.name)

/** A proxy fault held `holdMs`, then healed. */
const proxyFault = (dependency: Dependency, kind: string, faults: FaultSettings, target: Target, holdMs: number): Fault => ({
  label: `${dependency} ${kind} on ${targetName(target)} for ${holdMs / 1000} s`,
  kind: `${dependency} ${kind}`,
  run: async (fleet) => {
    const proxies = proxiesOf(fleet, dependency, target)
    await Promise.all(proxies.map((p) => p.set(faults)))
    if (faults.refuse === true) for (const p of proxies) p.resetAll()
    await sleep(holdMs)
    await Promise.all(proxies.map((p) => p.heal()))
  }
})

/** Connections reset every 700 ms for `holdMs`. */
const resets = (dependency: Dependency, target: Target, holdMs: number): Fault => ({
  label: `${dependency} connections reset on ${targetName(target)} for ${holdMs / 1000} s`,
  kind: `${dependency} reset`,
  run: async (fleet) => {
    const until = Date.now() + holdMs
    while (Date.now() < until) {
      for (const p of proxiesOf(fleet, dependency, target)) p.resetAll()
      await sleep(700)
    }
  }
})

const restartPostgres = (downMs: number): Fault => ({
  label: `PostgreSQL restarted (down ${downMs / 1000} s)`,
  kind: "postgres restart",
  run: (fleet) => fleet.restartPostgres(downMs)
})

const redisDown = (downMs: number): Fault => ({
  label: `Redis stopped for ${downMs / 1000} s`,
  kind: "redis stop",
  run: async (fleet) => {
    await fleet.stopRedis()
    await sleep(downMs)
    await fleet.startRedis()
  }
})

const signal = (signal: "SIGKILL" | "SIGTERM", member: (fleet: Fleet) => Member, pauseMs: number, name: string): Fault => ({
  label: `${signal} ${name}, started again ${pauseMs / 1000} s later`,
  kind: `${signal}`,
  run: async (fleet) => {
    const chosen = member(fleet)
    await fleet.stop(chosen, signal)
    await sleep(pauseMs)
    await fleet.start(chosen)
    chosen.restarts++
  }
})

/** Every kind of fault with its settings; `pick` chooses targets (a process, or the whole fleet). */
const catalogue = (pick: (dependency: Dependency) => Target, random: () => number, holdMs: number): ReadonlyArray<Fault> => {
  const hold = (factor = 1) => Math.round(holdMs * factor)
  const member = (role: "api" | "worker") => (fleet: Fleet) => {
    const candidates = role === "api" ? fleet.apis : fleet.workers
    return candidates[Math.floor(random() * candidates.length)]!
  }
  return [
    proxyFault("postgres", "latency", { latencyMs: 250, jitterMs: 200 }, pick("postgres"), hold()),
    proxyFault("s3", "latency", { latencyMs: 400, jitterMs: 300 }, pick("s3"), hold()),
    proxyFault("postgres", "black hole", { blackHole: true }, pick("postgres"), hold()),
    proxyFault("s3", "black hole", { blackHole: true }, pick("s3"), hold(1.5)),
    proxyFault("postgres", "lost COMMIT answer", { cutOnMatch: "COMMIT", holdMs: 300 }, "all", hold()),
    redisDown(hold()),
    proxyFault("postgres", "refusal", { refuse: true }, pick("postgres"), hold()),
    resets("s3", pick("s3"), hold()),
    signal("SIGKILL", member("worker"), 2_000, "a worker"),
    restartPostgres(2_000),
    proxyFault("redis", "black hole", { blackHole: true }, pick("redis"), hold()),
    proxyFault("s3", "cut after N bytes", { cutAfterBytes: 2_000 + Math.floor(random() * 30_000) }, pick("s3"), hold()),
    signal("SIGKILL", member("api"), 2_000, "an API node"),
    resets("postgres", pick("postgres"), hold()),
    proxyFault("s3", "bandwidth", { bytesPerSecond: 200_000 }, pick("s3"), hold()),
    proxyFault("postgres", "cut after N bytes", { cutAfterBytes: 500 + Math.floor(random() * 20_000) }, pick("postgres"), hold()),
    signal("SIGTERM", member("worker"), 1_000, "a worker"),
    proxyFault("s3", "refusal", { refuse: true }, pick("s3"), hold()),
    proxyFault("redis", "refusal", { refuse: true }, pick("redis"), hold()),
    proxyFault("postgres", "bandwidth", { bytesPerSecond: 50_000 }, pick("postgres"), hold()),
    signal("SIGTERM", member("api"), 1_000, "an API node")
  ]
}

export interface Schedule {
  readonly faults: ReadonlyArray<Fault>
  /** Pause after each fault, before the next. */
  readonly gapMs: number
}

/**
 * The short schedule: every kind once, each held 4 s, 1.5 s apart (about 2 minutes with the
 * restarts), targets alternating between one process and the whole fleet.
 */
export const shortSchedule = (fleet: Fleet, random: () => number): Schedule => {
  let turn = 0
  const pick = (dependency: Dependency): Target => {
    turn++
    if (turn % 2 === 0) return "all"
    const users = fleet.members.filter((m) => m.proxies[dependency] !== undefined)
    return users[turn % users.length]!
  }
  return { faults: catalogue(pick, random, 4_000), gapMs: 1_500 }
}

/** A long schedule: the catalogue shuffled again and again, random targets and holds of 4–12 s, until `minutes` are up. */
export const longSchedule = (fleet: Fleet, random: () => number, minutes: number): Schedule & { readonly untilMs: number } => {
  const pick = (dependency: Dependency): Target => {
    const users = fleet.members.filter((m) => m.proxies[dependency] !== undefined)
    return random() < 0.3 ? "all" : users[Math.floor(random() * users.length)]!
  }
  const faults: Array<Fault> = []
  // enough for the longest run; the runner stops when the time is up
  for (let round = 0; round < Math.ceil(minutes * 2) + 1; round++) {
    const shuffled = [...catalogue(pick, random, 1_000 * (4 + Math.floor(random() * 9)))]
    for (let i = shuffled.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1))
      ;[shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!]
    }
    faults.push(...shuffled)
  }
  return { faults, gapMs: 3_000, untilMs: minutes * 60_000 }
}
