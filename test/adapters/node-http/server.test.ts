/**
 * adapters/node-http/server.ts, Hush's HTTP server, against the platform's own
 * (`NodeHttpServer.layer`): one suite, both servers, so the leaner one answers as the platform's
 * does: statuses, headers and cookies, HEAD, streamed bodies under backpressure, the request's
 * parts (method, query, headers, cookies, address, bodies under the body-size limit), error
 * answers, a WebSocket upgrade asked for and not given, and a client that goes away
 * interrupting its handler.
 */
import {
  HttpIncomingMessage, HttpRouter, HttpServer, HttpServerRequest, HttpServerResponse
} from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Deferred, Effect, Exit, Layer, Option, Scope, Stream } from "effect"
import { createHash } from "node:crypto"
import { createServer, request as httpRequest } from "node:http"
import { connect } from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import * as NodeHttp from "../../../adapters/node-http/server.js"

/** 8 MiB in 64 KiB pieces, each piece's bytes its index: far past any socket buffer. */
const PIECES = 128
const piece = (i: number) => new Uint8Array(64 * 1024).fill(i % 256)
const streamedDigest = (() => {
  const hash = createHash("sha256")
  for (let i = 0; i < PIECES; i++) hash.update(piece(i))
  return hash.digest("hex")
})()

/** What the size-limited route's read of its body failed with, if it did. */
let limitedFailure: string | undefined
// made afresh by the test that waits on them
let handlerStarted = Effect.runSync(Deferred.make<void>())
let interrupted = Effect.runSync(Deferred.make<void>())

const app = HttpRouter.empty.pipe(
  HttpRouter.get("/json", HttpServerResponse.json({ hello: "world" }, { status: 201, headers: { "x-answer": "yes" } })),
  HttpRouter.get("/cookies", Effect.succeed(
    HttpServerResponse.text("ok", { headers: { "set-cookie": "raw=1" } }).pipe(
      HttpServerResponse.unsafeSetCookie("session", "abc", { httpOnly: true, path: "/" }),
      HttpServerResponse.unsafeSetCookie("theme", "dark")
    )
  )),
  HttpRouter.get("/stream", Effect.succeed(HttpServerResponse.stream(
    Stream.fromIterable(Array.from({ length: PIECES }, (_, i) => i)).pipe(Stream.map(piece)),
    { contentType: "application/octet-stream" }
  ))),
  HttpRouter.get("/empty", Effect.succeed(HttpServerResponse.empty({ status: 204 }))),
  HttpRouter.all("/echo", Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const text = yield* request.text
    return yield* HttpServerResponse.json({
      method: request.method, url: request.url, header: request.headers["x-probe"] ?? null, cookies: request.cookies,
      address: Option.getOrNull(request.remoteAddress), text
    })
  })),
  HttpRouter.post("/form", Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const form = yield* request.urlParamsBody
    return yield* HttpServerResponse.json(Object.fromEntries(form))
  })),
  HttpRouter.post("/limited", Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    return yield* Effect.match(request.text, {
      onFailure: (e) => {
        limitedFailure = e.reason
        return HttpServerResponse.text(`refused: ${e.reason}`, { status: 413 })
      },
      onSuccess: (text) => HttpServerResponse.text(`read ${text.length}`)
    })
  }).pipe(HttpIncomingMessage.withMaxBodySize(Option.some(16)))),
  HttpRouter.get("/defect", Effect.die(new Error("boom"))),
  HttpRouter.get("/hang", Effect.suspend(() => Effect.zipRight(
    Deferred.succeed(handlerStarted, undefined),
    Effect.onInterrupt(Effect.never, () => Deferred.succeed(interrupted, undefined))
  )))
)

const SERVERS = { "adapters/node-http": NodeHttp.layer, "platform-node": NodeHttpServer.layer } as const

const scopes: Array<Scope.CloseableScope> = []
afterEach(async () => {
  for (const scope of scopes.splice(0)) await Effect.runPromise(Scope.close(scope, Exit.void))
})

const start = async (layer: (typeof SERVERS)[keyof typeof SERVERS]) => {
  const scope = Effect.runSync(Scope.make())
  scopes.push(scope)
  const served = HttpServer.serve(app).pipe(Layer.provideMerge(layer(() => createServer(), { port: 0, host: "127.0.0.1" })))
  const context = await Effect.runPromise(Layer.buildWithScope(served, scope))
  const address = Context.get(context, HttpServer.HttpServer).address as HttpServer.TcpAddress
  return `http://127.0.0.1:${address.port}`
}

for (const [name, layer] of Object.entries(SERVERS)) {
  describe(`the ${name} server`, () => {
    it("answers a JSON body with its status and headers", async () => {
      const response = await fetch(`${await start(layer)}/json`)
      expect(response.status).toBe(201)
      expect(response.headers.get("x-answer")).toBe("yes")
      expect(response.headers.get("content-type")).toBe("application/json")
      expect(await response.json()).toEqual({ hello: "world" })
    })

    it("sends the answer's cookies as Set-Cookie lines beside its own", async () => {
      const response = await fetch(`${await start(layer)}/cookies`)
      expect(response.headers.getSetCookie().sort()).toEqual(["raw=1", "session=abc; Path=/; HttpOnly", "theme=dark"])
    })

    it("answers HEAD with the head alone, and an empty answer with no body", async () => {
      const url = await start(layer)
      const head = await fetch(`${url}/json`, { method: "HEAD" })
      expect(head.status).toBe(201)
      expect(head.headers.get("x-answer")).toBe("yes")
      expect(await head.text()).toBe("")
      const empty = await fetch(`${url}/empty`)
      expect(empty.status).toBe(204)
      expect(await empty.text()).toBe("")
    })

    it("streams a body far larger than the socket's buffers, whole and in order", async () => {
      const response = await fetch(`${await start(layer)}/stream`)
      const bytes = new Uint8Array(await response.arrayBuffer())
      expect(bytes.length).toBe(PIECES * 64 * 1024)
      expect(createHash("sha256").update(bytes).digest("hex")).toBe(streamedDigest)
    })

    it("gives the handler the request's method, path and query, headers, cookies, address and body", async () => {
      const response = await fetch(`${await start(layer)}/echo?a=1&b=two`, {
        method: "PUT", body: "the body", headers: { "x-probe": "probe", cookie: "one=1; two=2" }
      })
      expect(await response.json()).toEqual({
        method: "PUT", url: "/echo?a=1&b=two", header: "probe", cookies: { one: "1", two: "2" }, address: "127.0.0.1", text: "the body"
      })
    })

    it("reads a form body, and refuses a body over the context's size limit", async () => {
      const url = await start(layer)
      const form = await fetch(`${url}/form`, { method: "POST", body: new URLSearchParams({ a: "1", b: "x y" }) })
      expect(await form.json()).toEqual({ a: "1", b: "x y" })
      const small = await fetch(`${url}/limited`, { method: "POST", body: "0123456789" })
      expect(await small.text()).toBe("read 10")
      expect(limitedFailure).toBeUndefined()
      const over = fetch(`${url}/limited`, { method: "POST", body: "x".repeat(100_000) })
      if (name === "adapters/node-http") {
        // the rest of the body is read and dropped: the connection stays for the handler's answer
        const refused = await over
        expect([refused.status, await refused.text()]).toEqual([413, "refused: Decode"])
      } else {
        // the platform's body reader destroys the request, and the connection goes with it
        await over.catch(() => undefined)
        for (let wait = 0; wait < 100 && limitedFailure === undefined; wait++) await new Promise((r) => setTimeout(r, 20))
      }
      expect(limitedFailure).toBe("Decode")
      limitedFailure = undefined
    })

    it("answers an unknown route 404 and a defect 500", async () => {
      const url = await start(layer)
      expect((await fetch(`${url}/nowhere`)).status).toBe(404)
      expect((await fetch(`${url}/defect`)).status).toBe(500)
    })

    it("answers a request asking for a WebSocket upgrade as an ordinary request", async () => {
      const url = new URL(await start(layer))
      const head = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(url.port), url.hostname, () =>
          socket.write("GET /json HTTP/1.1\r\nHost: hush.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n" +
            "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"))
        let received = ""
        socket.on("data", (data) => {
          received += data
          if (received.includes("\r\n\r\n")) {
            socket.destroy()
            resolve(received)
          }
        })
        socket.on("error", reject)
      })
      expect(head.split("\r\n")[0]).toBe("HTTP/1.1 201 Created")
    })

    it("interrupts the handler of a client that goes away", async () => {
      const url = await start(layer)
      handlerStarted = Effect.runSync(Deferred.make<void>())
      interrupted = Effect.runSync(Deferred.make<void>())
      const request = httpRequest(`${url}/hang`)
      request.on("error", () => {})
      request.end()
      await Effect.runPromise(Deferred.await(handlerStarted))
      request.destroy()
      const exit = await Effect.runPromise(Deferred.await(interrupted).pipe(Effect.timeout("5 seconds"), Effect.exit))
      expect(Exit.isSuccess(exit)).toBe(true)
    })
  })
}
