/**
 * The signed-in dashboard over real HTTP: account, keys (idempotent creation, revoke, the limit
 * of 50), credit and lots, the ledger across pages, usage over a range with empty days, and job
 * history; every object only on its own account and in its own mode.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { grantCredit } from "../../core/services/accounts.js"
import { DAY, HOUR } from "../../core/time.js"
import { makeAdjustableClock } from "../support/clock.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { type Browser, verifiedUser, signUp } from "./browser.js"
import { call, denoise, expectIso, expectJobShape, expectProblem, readyFile, waitForJob } from "./helpers.js"

const liveKeyOf = async (browser: Browser, name = "live") => {
  const reply = await browser.request("POST", "/v1/dashboard/keys", { body: { mode: "live", name } })
  expect(reply.status, reply.text).toBe(201)
  return { id: reply.json.key.id as string, secret: reply.json.secret as string }
}

const testKeyOf = async (browser: Browser, name = "test") => {
  const reply = await browser.request("POST", "/v1/dashboard/keys", { body: { mode: "test", name } })
  expect(reply.status, reply.text).toBe(201)
  return { id: reply.json.key.id as string, secret: reply.json.secret as string }
}

describe("dashboard", () => {
  const clock = makeAdjustableClock()
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ clock, accountSettings: { signupsPerHourPerIp: 1_000 } })
    // noon UTC, time standing still unless moved: days never turn over by themselves mid-test
    const now = Date.now()
    const noon = Math.floor(now / DAY) * DAY + 12 * HOUR
    clock.advance((noon >= now ? noon : noon + DAY) - now)
    clock.freeze()
  })
  afterAll(async () => {
    await server.close()
  })

  it("account: GET, and PATCH of the name (null clears it, absent keeps it)", async () => {
    const { browser, reply } = await signUp(server)
    const account = await browser.request("GET", "/v1/dashboard/account")
    expect(account.status).toBe(200)
    expect(account.json).toEqual({
      id: reply.json.account.id, name: "", status: "active", has_purchased: false, terms_version: "2026-11-01", training_opt_in: false
    })
    const named = await browser.request("PATCH", "/v1/dashboard/account", { body: { name: "Acme Audio" } })
    expect(named.status, named.text).toBe(200)
    expect(named.json.name).toBe("Acme Audio")
    expect((await browser.request("PATCH", "/v1/dashboard/account", { body: {} })).json.name).toBe("Acme Audio")
    expect((await browser.request("GET", "/v1/auth/session")).json.account.name).toBe("Acme Audio")
    expect((await browser.request("PATCH", "/v1/dashboard/account", { body: { name: null } })).json.name).toBe("")
    await expectProblem(server, await browser.request("PATCH", "/v1/dashboard/account", { body: { name: "x".repeat(201) } }), 422, "invalid_request")
    await expectProblem(server, await browser.request("PATCH", "/v1/dashboard/account", { body: { status: "active" } }), 422, "invalid_request")
  })

  it("key creation with Idempotency-Key: a replay answers the first key with secret null and already_displayed true", async () => {
    const { browser } = await verifiedUser(server)
    const body = { mode: "live", name: "ci", scopes: ["jobs:read", "files:write"] }
    const first = await browser.request("POST", "/v1/dashboard/keys", { body, headers: { "idempotency-key": "create-ci-key" } })
    expect(first.status, first.text).toBe(201)
    expect(first.json.secret).toMatch(/^hush_live_[a-z2-7]{52}$/)
    expect(first.json.already_displayed).toBe(false)
    expect(first.json.key.scopes).toEqual(["files:write", "jobs:read"])
    expect(first.headers.get("idempotent-replayed")).toBeNull()

    const replay = await browser.request("POST", "/v1/dashboard/keys", { body, headers: { "idempotency-key": "create-ci-key" } })
    expect(replay.status, replay.text).toBe(201)
    expect(replay.json).toEqual({ key: first.json.key, secret: null, already_displayed: true })
    expect(replay.headers.get("idempotent-replayed")).toBe("true")
    // one key only
    expect((await browser.request("GET", "/v1/dashboard/keys")).json.data.map((k: any) => k.id)).toEqual([first.json.key.id])

    const other = await browser.request("POST", "/v1/dashboard/keys", { body: { ...body, name: "other" }, headers: { "idempotency-key": "create-ci-key" } })
    await expectProblem(server, other, 409, "idempotency_key_reused")
    const bad = await browser.request("POST", "/v1/dashboard/keys", { body, headers: { "idempotency-key": "k".repeat(256) } })
    await expectProblem(server, bad, 400, "invalid_request")
    // the same Idempotency-Key on another account is that account's own
    const stranger = await verifiedUser(server)
    const theirs = await stranger.browser.request("POST", "/v1/dashboard/keys", { body, headers: { "idempotency-key": "create-ci-key" } })
    expect(theirs.status).toBe(201)
    expect(theirs.json.secret).not.toBeNull()

    // a refusal is replayed as the same refusal
    const unverified = await signUp(server)
    const refused = await unverified.browser.request("POST", "/v1/dashboard/keys", { body: { mode: "live" }, headers: { "idempotency-key": "k1" } })
    await expectProblem(server, refused, 403, "forbidden")
    const refusedAgain = await unverified.browser.request("POST", "/v1/dashboard/keys", { body: { mode: "live" }, headers: { "idempotency-key": "k1" } })
    await expectProblem(server, refusedAgain, 403, "forbidden")
    expect(refusedAgain.headers.get("idempotent-replayed")).toBe("true")
  })

  it("unknown scopes and an unknown mode are 422; keys list newest first, revoked ones included", async () => {
    const { browser } = await verifiedUser(server)
    await expectProblem(server, await browser.request("POST", "/v1/dashboard/keys", { body: { mode: "live", scopes: ["admin"] } }), 422, "invalid_request")
    await expectProblem(server, await browser.request("POST", "/v1/dashboard/keys", { body: { mode: "prod" } }), 422, "invalid_request")
    const a = await testKeyOf(browser, "a")
    clock.advance(1_000)
    const b = await liveKeyOf(browser, "b")
    clock.advance(1_000)
    const revoked = await browser.request("POST", `/v1/dashboard/keys/${a.id}/revoke`)
    expect(revoked.status, revoked.text).toBe(200)
    expectIso(revoked.json.revoked_at)
    // revoking again changes nothing
    expect((await browser.request("POST", `/v1/dashboard/keys/${a.id}/revoke`)).json.revoked_at).toBe(revoked.json.revoked_at)
    const list = await browser.request("GET", "/v1/dashboard/keys")
    expect(list.json.data.map((k: any) => [k.id, k.revoked_at === null])).toEqual([[b.id, true], [a.id, false]])
    for (const key of list.json.data) {
      expect(Object.keys(key).sort()).toEqual(["created_at", "id", "last_four", "last_used_at", "mode", "name", "prefix_display", "revoked_at", "scopes"])
      expect(JSON.stringify(key)).not.toContain(b.secret.slice(14))
    }
  })

  it("revoke → the key's next API request is 401", async () => {
    const { browser } = await verifiedUser(server)
    const key = await liveKeyOf(browser)
    expect((await call(server, "GET", "/v1/me", { key: key.secret })).status).toBe(200)
    clock.advance(60_000)
    expect((await browser.request("GET", "/v1/dashboard/keys")).json.data[0].last_used_at).not.toBeNull()
    expect((await browser.request("POST", `/v1/dashboard/keys/${key.id}/revoke`)).status).toBe(200)
    await expectProblem(server, await call(server, "GET", "/v1/me", { key: key.secret }), 401, "unauthorized")
  })

  it("at most 50 unrevoked keys; revoking one makes room", async () => {
    const { browser } = await signUp(server)
    const ids: Array<string> = []
    for (let i = 0; i < 50; i++) ids.push((await testKeyOf(browser, `k${i}`)).id)
    const over = await browser.request("POST", "/v1/dashboard/keys", { body: { mode: "test" } })
    expect((await expectProblem(server, over, 403, "forbidden")).detail).toContain("50")
    expect((await browser.request("POST", `/v1/dashboard/keys/${ids[7]}/revoke`)).status).toBe(200)
    expect((await browser.request("POST", "/v1/dashboard/keys", { body: { mode: "test" } })).status).toBe(201)
    expect((await browser.request("GET", "/v1/dashboard/keys")).json.data).toHaveLength(51)
  })

  it("credits: the wallet with its unexpired lots, earliest expiry first", async () => {
    const { browser, reply, email, password } = await verifiedUser(server)
    const accountId = reply.json.account.id as string
    const empty = await browser.request("GET", "/v1/dashboard/credits")
    expect(empty.json).toEqual({
      balance_micros: 0, reserved_micros: 0, available_micros: 0, currency: "usd", display: "$0.00",
      balance_display: "$0.00", reserved_display: "$0.00", has_purchased: false, lots: [], lots_truncated: false
    })
    await server.run(grantCredit(accountId, 5_000_000))
    clock.advance(DAY)
    await server.run(grantCredit(accountId, 1_230))
    const credits = await browser.request("GET", "/v1/dashboard/credits")
    expect(credits.json).toMatchObject({ balance_micros: 5_001_230, reserved_micros: 0, available_micros: 5_001_230, display: "$5.00123", lots_truncated: false })
    expect(credits.json.lots.map((l: any) => [l.amount_micros, l.remaining_micros, l.source])).toEqual([[5_000_000, 5_000_000, "grant"], [1_230, 1_230, "grant"]])
    expect(credits.json).toMatchObject({ balance_display: "$5.00123", reserved_display: "$0.00" })
    expect(credits.json.lots.map((l: any) => [l.amount_display, l.remaining_display])).toEqual([["$5.00", "$5.00"], ["$0.00123", "$0.00123"]])
    for (const lot of credits.json.lots) {
      expect(Date.parse(lot.expires_at) - Date.parse(lot.purchased_at)).toBe(365 * DAY)
    }
    // past the first lot's expiry it is gone from the list and the balance
    clock.advance(364 * DAY + 1)
    // (the session ended long ago: 30 days at most)
    await expectProblem(server, await browser.request("GET", "/v1/dashboard/credits"), 401, "unauthorized")
    expect((await browser.request("POST", "/v1/auth/login", { body: { email, password } })).status).toBe(200)
    const later = await browser.request("GET", "/v1/dashboard/credits")
    expect(later.json.balance_micros).toBe(1_230)
    expect(later.json.lots.map((l: any) => l.amount_micros)).toEqual([1_230])

    // at most 100 lots, the earliest expiring; lots_truncated says there are more
    for (let i = 0; i < 100; i++) {
      clock.advance(1_000)
      await server.run(grantCredit(accountId, 1_000 + i))
    }
    const many = await browser.request("GET", "/v1/dashboard/credits")
    expect(many.json.lots).toHaveLength(100)
    expect(many.json.lots_truncated).toBe(true)
    expect(many.json.lots[0].amount_micros).toBe(1_230)
    expect(many.json.lots[99].amount_micros).toBe(1_098)
    expect(many.json.balance_micros).toBe(1_230 + 100 * 1_000 + (99 * 100) / 2)
  })

  it("ledger: newest first across pages, each entry's *_after the previous one's plus its deltas; job detail shows its entries", async () => {
    const { browser, reply } = await verifiedUser(server)
    const accountId = reply.json.account.id as string
    for (const micros of [10_000_000, 2_000_000, 3_000_000]) await server.run(grantCredit(accountId, micros))
    const key = await liveKeyOf(browser)
    const file = await readyFile(server, key.secret)
    const jobs: Array<string> = []
    for (let i = 0; i < 4; i++) {
      const job = await denoise(server, key.secret, { file })
      expect(job.status, job.text).toBe(202)
      jobs.push(job.json.id)
      if (i % 2 === 0) expect((await call(server, "POST", `/v1/jobs/${job.json.id}/cancel`, { key: key.secret })).status).toBe(200)
    }
    // 3 grants + 4 holds + 2 releases
    const entries: Array<any> = []
    let cursor: string | null = null
    let pages = 0
    do {
      const page: any = await browser.request("GET", `/v1/dashboard/ledger?limit=4${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`)
      expect(page.status, page.text).toBe(200)
      expect(page.json.data.length).toBeLessThanOrEqual(4)
      entries.push(...page.json.data)
      cursor = page.json.next_cursor
      pages++
    } while (cursor !== null)
    expect(pages).toBe(3)
    expect(entries).toHaveLength(9)
    // job 0 held and released, job 1 held, job 2 held and released, job 3 held
    expect(entries.map((e) => e.kind)).toEqual(["hold", "release", "hold", "hold", "release", "hold", "grant", "grant", "grant"])
    for (let i = 0; i < entries.length - 1; i++) {
      const [newer, older] = [entries[i], entries[i + 1]]
      expect(newer.balance_after).toBe(older.balance_after + newer.balance_delta)
      expect(newer.reserved_after).toBe(older.reserved_after + newer.reserved_delta)
    }
    const oldest = entries[entries.length - 1]
    expect(oldest.balance_after).toBe(oldest.balance_delta)
    expect(entries[0]).toMatchObject({ balance_after: 15_000_000 })
    expect(Object.keys(entries[0]).sort()).toEqual(
      ["balance_after", "balance_delta", "checkout", "created_at", "display", "id", "job", "kind", "reason", "reserved_after", "reserved_delta"]
    )
    expect(entries[8]).toMatchObject({ kind: "grant", display: "$10.00", job: null, checkout: null })
    const holds = entries.filter((e) => e.kind === "hold")
    // a hold shows what it reserved (1 s of audio at the 10-second minimum: $0.001)
    expect(holds.map((h) => [h.reserved_delta, h.balance_delta, h.display])).toEqual(holds.map(() => [1_000, 0, "$0.001"]))
    expect((await browser.request("GET", "/v1/dashboard/credits")).json.reserved_micros).toBe(holds[0].reserved_delta * 2)

    // a job's detail: its hold and release, oldest first, and its key
    const detail = await browser.request("GET", `/v1/dashboard/jobs/${jobs[0]}`)
    expect(detail.status, detail.text).toBe(200)
    const { key: keySummary, ledger, input: { filename, ...input }, ...job } = detail.json
    // the dashboard's job names its input as uploaded; the rest is the API's Job
    expect(filename).toBe("interview.wav")
    expectJobShape({ ...job, input })
    expect(keySummary).toEqual({ id: key.id, name: "live", mode: "live" })
    expect(ledger.map((e: any) => e.kind)).toEqual(["hold", "release"])
    expect(Object.keys(ledger[0]).sort()).toEqual(["balance_delta", "created_at", "display", "id", "kind", "reserved_delta"])
    expect(ledger[0].reserved_delta + ledger[1].reserved_delta).toBe(0)

    // cursors are signed and bound to the account
    await expectProblem(server, await browser.request("GET", "/v1/dashboard/ledger?cursor=bogus"), 400, "invalid_request")
    const page1 = await browser.request("GET", "/v1/dashboard/ledger?limit=1")
    const stranger = await signUp(server)
    await expectProblem(server, await stranger.browser.request("GET", `/v1/dashboard/ledger?cursor=${encodeURIComponent(page1.json.next_cursor)}`), 400, "invalid_request")
    await expectProblem(server, await browser.request("GET", "/v1/dashboard/ledger?limit=101"), 400, "invalid_request")
  })

  it("usage: a row for every day of the range, zeros included; by model and by key; range rules", async () => {
    const { browser } = await verifiedUser(server)
    const test = await testKeyOf(browser, "sandbox")
    const other = await testKeyOf(browser, "second")
    const file = await readyFile(server, test.secret)
    const otherFile = await readyFile(server, other.secret)
    const start = clock.now()
    const day = (offset: number) => new Date(start + offset * DAY).toISOString().slice(0, 10)
    const today = day(0)
    const run = async (secret: string, fileId: string) => {
      const job = await denoise(server, secret, { file: fileId })
      expect(job.status, job.text).toBe(202)
      expect((await waitForJob(server, secret, job.json.id)).json.status).toBe("succeeded")
    }
    await run(test.secret, file)
    await run(test.secret, file)
    clock.advance(2 * DAY)
    await run(other.secret, otherFile)
    const from = new Date(Date.parse(today) - 2 * DAY).toISOString().slice(0, 10)
    const to = new Date(Date.parse(today) + 3 * DAY).toISOString().slice(0, 10)

    const usage = await browser.request("GET", `/v1/dashboard/usage?from=${from}&to=${to}&mode=test`)
    expect(usage.status, usage.text).toBe(200)
    expect(usage.json).toMatchObject({ from, to, group: "day", mode: "test" })
    expect(usage.json.rows.map((r: any) => [r.key, r.jobs, r.succeeded])).toEqual([
      [from, 0, 0], [day(-1), 0, 0], [today, 2, 2], [day(1), 0, 0], [day(2), 1, 1], [to, 0, 0]
    ])
    const billable = usage.json.rows[2].billable_seconds
    expect(billable).toBeGreaterThan(0)
    for (const row of usage.json.rows) {
      expect(Object.keys(row).sort()).toEqual(["billable_seconds", "charged_micros", "display", "failed", "jobs", "key", "name", "succeeded"])
      expect(row).toMatchObject({ name: null, failed: 0, charged_micros: 0, display: "$0.00" })
    }
    expect(usage.json.totals).toEqual({ jobs: 3, succeeded: 3, failed: 0, billable_seconds: billable * 3 / 2, charged_micros: 0, display: "$0.00" })

    // live mode: nothing in this range
    const live = await browser.request("GET", `/v1/dashboard/usage?from=${from}&to=${to}`)
    expect(live.json.mode).toBe("live")
    expect(live.json.rows.every((r: any) => r.jobs === 0)).toBe(true)

    const byKey = await browser.request("GET", `/v1/dashboard/usage?from=${from}&to=${to}&mode=test&group=key`)
    expect(byKey.json.rows.map((r: any) => [r.key, r.name, r.jobs]).sort()).toEqual([[other.id, "second", 1], [test.id, "sandbox", 2]].sort())
    const byModel = await browser.request("GET", `/v1/dashboard/usage?from=${from}&to=${to}&mode=test&group=model`)
    expect(byModel.json.rows.map((r: any) => [r.key, r.name, r.jobs])).toEqual([["xiph/rnnoise", null, 3]])

    // defaults: to = today (UTC, now two days on), from = 29 days before
    const defaults = await browser.request("GET", "/v1/dashboard/usage?mode=test")
    expect(defaults.json.to).toBe(day(2))
    expect(defaults.json.rows).toHaveLength(30)
    expect(defaults.json.rows[0].key).toBe(day(-27))
    expect(defaults.json.totals.jobs).toBe(3)

    await expectProblem(server, await browser.request("GET", `/v1/dashboard/usage?from=${to}&to=${from}`), 400, "invalid_request")
    const wide = await browser.request("GET", `/v1/dashboard/usage?from=2024-01-01&to=2025-01-02`)
    await expectProblem(server, wide, 400, "invalid_request")
    expect((await browser.request("GET", "/v1/dashboard/usage?from=2024-01-01&to=2025-01-01")).json.rows).toHaveLength(367)
    await expectProblem(server, await browser.request("GET", "/v1/dashboard/usage?from=2024-02-30"), 400, "invalid_request")
    await expectProblem(server, await browser.request("GET", "/v1/dashboard/usage?group=week"), 400, "invalid_request")
  })

  it("another account's or another mode's objects are 404", async () => {
    const a = await verifiedUser(server)
    const b = await verifiedUser(server)
    const aLive = await liveKeyOf(a.browser)
    const aTest = await testKeyOf(a.browser)
    await server.run(grantCredit(a.reply.json.account.id, 10_000_000))
    const liveJob = await denoise(server, aLive.secret, { file: await readyFile(server, aLive.secret) })
    const testJob = await denoise(server, aTest.secret, { file: await readyFile(server, aTest.secret) })
    expect([liveJob.status, testJob.status]).toEqual([202, 202])

    // the owner sees each in its mode
    expect((await a.browser.request("GET", `/v1/dashboard/jobs/${liveJob.json.id}`)).status).toBe(200)
    expect((await a.browser.request("GET", `/v1/dashboard/jobs/${liveJob.json.id}?mode=live`)).status).toBe(200)
    expect((await a.browser.request("GET", `/v1/dashboard/jobs/${testJob.json.id}?mode=test`)).status).toBe(200)
    // …and not in the other
    await expectProblem(server, await a.browser.request("GET", `/v1/dashboard/jobs/${liveJob.json.id}?mode=test`), 404, "not_found")
    await expectProblem(server, await a.browser.request("GET", `/v1/dashboard/jobs/${testJob.json.id}`), 404, "not_found")
    const liveList = await a.browser.request("GET", "/v1/dashboard/jobs")
    expect(liveList.json.data.map((j: any) => j.id)).toEqual([liveJob.json.id])
    expect(liveList.json.data[0].key).toEqual({ id: aLive.id, name: "live", mode: "live" })
    expect(liveList.json.next_cursor).toBeNull()
    const testList = await a.browser.request("GET", "/v1/dashboard/jobs?mode=test&limit=1")
    expect(testList.json.data.map((j: any) => j.id)).toEqual([testJob.json.id])

    // the output's download link (the dashboard's download button): only once succeeded
    const output = await a.browser.request("GET", `/v1/dashboard/jobs/${testJob.json.id}/output?mode=test`)
    expect(output.status, output.text).toBe(200)
    expect(output.json.filename).toMatch(/\.denoised\.mp3$/)
    expect((await fetch(output.json.url)).status).toBe(200)
    await expectProblem(server, await a.browser.request("GET", `/v1/dashboard/jobs/${liveJob.json.id}/output`), 409, "job_not_succeeded")
    await expectProblem(server, await a.browser.request("GET", `/v1/dashboard/jobs/${testJob.json.id}/output`), 404, "not_found")

    // another account sees none of it, whichever mode
    for (const id of [liveJob.json.id, testJob.json.id]) {
      for (const mode of ["live", "test"]) {
        await expectProblem(server, await b.browser.request("GET", `/v1/dashboard/jobs/${id}?mode=${mode}`), 404, "not_found")
        await expectProblem(server, await b.browser.request("GET", `/v1/dashboard/jobs/${id}/output?mode=${mode}`), 404, "not_found")
      }
    }
    expect((await b.browser.request("GET", "/v1/dashboard/jobs?mode=test")).json.data).toEqual([])
    expect((await b.browser.request("GET", "/v1/dashboard/ledger")).json.data).toEqual([])
    await expectProblem(server, await b.browser.request("POST", `/v1/dashboard/keys/${aLive.id}/revoke`), 404, "not_found")
    expect((await call(server, "GET", "/v1/me", { key: aLive.secret })).status).toBe(200)
    await expectProblem(server, await a.browser.request("GET", "/v1/dashboard/jobs?mode=staging"), 400, "invalid_request")
  })
})
