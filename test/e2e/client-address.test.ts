/**
 * The client's address over HTTP (issue 29; decisions.md, Requests and errors): behind a
 * trusted proxy (`TRUSTED_PROXIES`) each client forwarded for has its own per-IP buckets;
 * anyone else's `X-Forwarded-For` is ignored; an IPv6 client is counted by its /64. The test
 * server is reached from 127.0.0.1: trusting `127.0.0.1/32` makes this test the proxy.
 * Signups (2 an hour per IP here) and failed logins (2 per IP) show which bucket a request drew on.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../support/server.js"
import { uniqueEmail } from "./browser.js"
import { call, expectProblem } from "./helpers.js"

const LIMITS = { signupsPerHourPerIp: 2, failedLoginsPerIp: 2, failedLoginsPerAddress: 1_000 }

const signupFrom = (server: TestServer, forwardedFor: string | undefined) =>
  call(server, "POST", "/v1/auth/signup", {
    body: { email: uniqueEmail("proxy"), password: "long enough password", accept_terms: true },
    headers: forwardedFor === undefined ? {} : { "x-forwarded-for": forwardedFor }
  })

/** Statuses of signups from each `X-Forwarded-For` in turn. */
const signups = async (server: TestServer, ...forwardedFor: ReadonlyArray<string | undefined>) => {
  const statuses: Array<number> = []
  for (const header of forwardedFor) statuses.push((await signupFrom(server, header)).status)
  return statuses
}

describe("behind a trusted proxy (TRUSTED_PROXIES=127.0.0.1/32, 10.0.0.0/8)", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ trustedProxies: "127.0.0.1/32, 10.0.0.0/8", accountSettings: LIMITS })
  })
  afterAll(async () => {
    await server.close()
  })

  it("gives two clients separate buckets: one spent does not refuse the other", async () => {
    expect(await signups(server, "203.0.113.5", "203.0.113.5", "203.0.113.5")).toEqual([201, 201, 429])
    expect(await signups(server, "198.51.100.7")).toEqual([201])
  })

  it("counts the right-most untrusted hop: a client's own left entries and the trusted hops after it change nothing", async () => {
    expect(await signups(server, "192.0.2.10", "192.0.2.10")).toEqual([201, 201])
    const refused = await signupFrom(server, "198.51.100.99, 192.0.2.10")
    await expectProblem(server, refused, 429, "rate_limited")
    expect(await signups(server, "192.0.2.10, 10.1.2.3", "192.0.2.10,10.9.9.9, 10.0.0.1")).toEqual([429, 429])
    // the spoofed address's own bucket was never drawn on
    expect(await signups(server, "198.51.100.99")).toEqual([201])
  })

  it("counts an IPv6 client by its /64: two addresses in one /64 share a bucket, another /64 has its own", async () => {
    expect(await signups(server, "2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:fffe", "2001:db8:1:2::abcd")).toEqual([201, 201, 429])
    expect(await signups(server, "2001:db8:1:3::1")).toEqual([201])
  })

  it("counts failed logins per client too, an IPv6 one by its /64", async () => {
    const login = (forwardedFor: string) =>
      call(server, "POST", "/v1/auth/login", { body: { email: uniqueEmail("nobody"), password: "wrong" }, headers: { "x-forwarded-for": forwardedFor } })
    expect((await login("2001:db8:7:7::1")).status).toBe(401)
    expect((await login("2001:db8:7:7::2")).status).toBe(401)
    await expectProblem(server, await login("2001:db8:7:7:1:2:3:4"), 429, "rate_limited")
    expect((await login("2001:db8:7:8::1")).status).toBe(401)
    expect((await login("203.0.113.80")).status).toBe(401)
  })
})

describe("X-Forwarded-For from a peer that is not trusted", () => {
  for (const trustedProxies of [undefined, "10.0.0.0/8"]) {
    it(`is ignored (TRUSTED_PROXIES ${trustedProxies ?? "unset"}): every client behind the peer shares its bucket`, async () => {
      const server = await startTestServer({ trustedProxies, accountSettings: LIMITS })
      try {
        expect(await signups(server, "203.0.113.5", "198.51.100.7", "192.0.2.1", undefined)).toEqual([201, 201, 429, 429])
      } finally {
        await server.close()
      }
    })
  }
})
