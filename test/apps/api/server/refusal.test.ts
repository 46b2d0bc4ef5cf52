/**
 * `npm start`'s server (adapters/node-http/server.ts with apps/api/server/refusal.ts): the
 * platform's contract listens before the app is served and stops serving before the server
 * closes. A request in the first gap must wait for the app, one in the second must be refused
 * with a problem, never left unanswered.
 */
import { HttpServer, HttpServerResponse } from "@effect/platform"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { createServer } from "node:http"
import { afterEach, describe, expect, it } from "vitest"
import * as NodeHttp from "../../../../adapters/node-http/server.js"
import { refuseWithProblem } from "../../../../apps/api/server/refusal.js"

const scopes: Array<Scope.CloseableScope> = []
afterEach(async () => {
  for (const scope of scopes.splice(0).reverse()) await Effect.runPromise(Scope.close(scope, Exit.void))
})

const newScope = async () => {
  const scope = await Effect.runPromise(Scope.make())
  scopes.push(scope)
  return scope
}

/** Listening, nothing served yet. */
const listening = async () => {
  const layer = NodeHttp.layer(createServer, { port: 0, host: "127.0.0.1" }, refuseWithProblem("http://hush.test/errors"))
  const context = await Effect.runPromise(Layer.buildWithScope(layer, await newScope()))
  const server = Context.get(context, HttpServer.HttpServer)
  const address = server.address as HttpServer.TcpAddress
  const serve = async () => {
    const scope = await newScope()
    await Effect.runPromise(server.serve(HttpServerResponse.text("hello")).pipe(Scope.extend(scope), Effect.provide(context)))
    return scope
  }
  return { url: `http://127.0.0.1:${address.port}`, serve }
}

describe("the HTTP server between listening and serving", () => {
  it("holds a request that arrives before the app is served, and answers it once it is", async () => {
    const { url, serve } = await listening()
    let settled = false
    const early = fetch(`${url}/v1/health`).then(async (r) => {
      settled = true
      return { status: r.status, text: await r.text() }
    })
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(settled).toBe(false) // waiting, not refused
    await serve()
    expect(await early).toEqual({ status: 200, text: "hello" })
    expect(await (await fetch(url)).text()).toBe("hello")
  })

  it("refuses a request that arrives after serving stopped: 503 problem, Retry-After, connection closed", async () => {
    const { url, serve } = await listening()
    const served = await serve()
    expect(await (await fetch(url)).text()).toBe("hello")
    await Effect.runPromise(Scope.close(served, Exit.void))
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
