/**
 * apps/api/server/gated-server.ts: the HTTP server layer listens before it attaches its handler and
 * detaches it before closing. A request in the first gap must wait for the handler, one in the
 * second must be refused, never left unanswered.
 */
import type { AddressInfo } from "node:net"
import type { IncomingMessage, ServerResponse } from "node:http"
import { afterEach, describe, expect, it } from "vitest"
import { createGatedServer, refuseUnavailable } from "../../../../apps/api/server/gated-server.js"

const servers: Array<ReturnType<typeof createGatedServer>> = []
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve))
})

const listening = async () => {
  const server = createGatedServer(refuseUnavailable("http://hush.test/errors"))
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}

const hello = (_: IncomingMessage, response: ServerResponse) => response.end("hello")

describe("the gated HTTP server", () => {
  it("holds a request that arrives before the handler, and answers it once the handler is there", async () => {
    const { server, url } = await listening()
    let settled = false
    const early = fetch(`${url}/v1/health`).then(async (r) => {
      settled = true
      return { status: r.status, text: await r.text() }
    })
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(settled).toBe(false) // waiting, not refused
    server.on("request", hello)
    expect(await early).toEqual({ status: 200, text: "hello" })
    // later requests go straight to the handler, once each
    expect(await (await fetch(url)).text()).toBe("hello")
    expect(server.listenerCount("request")).toBe(1)
  })

  it("refuses a request that arrives after the handler is gone: 503 problem, Retry-After, connection closed", async () => {
    const { server, url } = await listening()
    server.on("request", hello)
    server.off("request", hello)
    const late = await fetch(`${url}/v1/jobs`)
    expect(late.status).toBe(503)
    expect(late.headers.get("content-type")).toBe("application/problem+json")
    expect(late.headers.get("retry-after")).toBe("1")
    expect(late.headers.get("connection")).toBe("close")
    const body = (await late.json()) as { request_id: string }
    expect(body).toMatchObject({
      type: "http://hush.test/errors/service_unavailable", status: 503, code: "service_unavailable", retry_after: 1
    })
    expect(body.request_id).toBe(late.headers.get("x-request-id"))
    expect(body.request_id).toMatch(/^req_[a-z2-7]{24}$/)
  })
})
