/**
 * The S3 blob store when the store is unreachable or says it cannot answer now (decisions.md,
 * Faults): such a failure is a BlobError marked `unavailable` (the API answers 503, the worker
 * and validation try again inside their lease); a refusal (403, 404) is not. On s3rver behind
 * the fault proxy, and on the classification of SDK errors; a process that starts while the
 * store refuses waits for it.
 */
import { Cause, Effect, Exit, Layer, ManagedRuntime, Option, Scope, Stream } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { isUnavailable, layerS3BlobStore, sdkErrorInfo, toBlobError } from "../../../adapters/s3/store.js"
import { layerTestSample } from "../../../apps/runtime/layers.js"
import { TestSample } from "../../../core/domain/deployment.js"
import { BlobError, BlobStore } from "../../../core/ports/blob-store.js"
import { type FaultProxy, startFaultProxy } from "../../support/fault-proxy.js"
import { startS3rver } from "../../support/s3rver.js"

describe("S3 errors: unavailable or refused", () => {
  const classify = (cause: unknown) => isUnavailable(sdkErrorInfo(cause))

  it("network failures, timeouts, 5xx and throttling are unavailable", () => {
    expect(classify(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" }))).toBe(true)
    expect(classify(Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }))).toBe(true)
    expect(classify(Object.assign(new Error("socket timed out after 10000 ms of inactivity"), { name: "TimeoutError" }))).toBe(true)
    expect(classify(Object.assign(new Error("We encountered an internal error"), { name: "InternalError", $metadata: { httpStatusCode: 500 } }))).toBe(true)
    expect(classify(Object.assign(new Error("Please reduce your request rate."), { name: "SlowDown", $metadata: { httpStatusCode: 503 } }))).toBe(true)
    expect(classify(Object.assign(new Error(""), { name: "Unknown", $metadata: { httpStatusCode: 502 } }))).toBe(true)
  })

  it("refusals are not: access denied, no such key or bucket, a bad request", () => {
    expect(classify(Object.assign(new Error("Access Denied"), { name: "AccessDenied", $metadata: { httpStatusCode: 403 } }))).toBe(false)
    expect(classify(Object.assign(new Error("The specified key does not exist."), { name: "NoSuchKey", $metadata: { httpStatusCode: 404 } }))).toBe(false)
    expect(classify(Object.assign(new Error("The specified bucket does not exist"), { name: "NoSuchBucket", $metadata: { httpStatusCode: 404 } }))).toBe(false)
    expect(classify(Object.assign(new Error("One or more of the specified parts could not be found."), { name: "InvalidPart", $metadata: { httpStatusCode: 400 } }))).toBe(false)
    expect(toBlobError("stat x", Object.assign(new Error("Access Denied"), { name: "AccessDenied", $metadata: { httpStatusCode: 403 } })).unavailable).toBe(false)
  })
})

describe("S3 behind a faulty network", () => {
  let proxy: FaultProxy
  let runtime: ManagedRuntime.ManagedRuntime<BlobStore, never>
  let closeServer: () => Promise<void>

  beforeAll(async () => {
    // a server that outlives this setup: its scope closes in afterAll
    const scope = Effect.runSync(Scope.make())
    const running = await Effect.runPromise(Scope.extend(startS3rver({ bucket: "hush-faults" }), scope))
    closeServer = () => Effect.runPromise(Scope.close(scope, Exit.void))
    const endpoint = new URL(running.endpoint)
    proxy = await startFaultProxy({ target: { host: endpoint.hostname, port: Number(endpoint.port) } })
    runtime = ManagedRuntime.make(layerS3BlobStore({ ...running.options, endpoint: `http://127.0.0.1:${proxy.port}` }) as Layer.Layer<BlobStore>)
    await runtime.runPromise(Effect.flatMap(BlobStore, (store) => store.write("a/one", Stream.make(new Uint8Array(10)), { contentType: "audio/wav" })))
  }, 60_000)

  afterAll(async () => {
    await runtime?.dispose()
    await proxy?.close()
    await closeServer?.()
  })

  const failureOf = <A>(exit: Exit.Exit<A, BlobError>) =>
    Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined

  const stat = (key: string) => runtime.runPromiseExit(Effect.flatMap(BlobStore, (store) => store.stat(key)))

  it("refused: a BlobError marked unavailable; answered again once healed", async () => {
    await proxy.set({ refuse: true })
    // the client's kept-alive connections go too
    proxy.resetAll()
    const failure = failureOf(await stat("a/one"))
    expect(failure).toBeInstanceOf(BlobError)
    expect(failure?.unavailable).toBe(true)
    await proxy.heal()
    expect(await stat("a/one")).toEqual(Exit.succeed(Option.some({ sizeBytes: 10 })))
  }, 30_000)

  it("reset mid-answer: unavailable; a missing key stays a plain None", async () => {
    await proxy.set({ cutAfterBytes: 5 })
    expect(failureOf(await stat("a/one"))?.unavailable).toBe(true)
    await proxy.heal()
    expect(await stat("a/missing")).toEqual(Exit.succeed(Option.none()))
  }, 30_000)

  it("a process that starts while storage refuses waits for it: the test-mode samples are stored once it answers", async () => {
    await proxy.set({ refuse: true })
    proxy.resetAll()
    const from = Date.now()
    const starting = ManagedRuntime.make(layerTestSample.pipe(Layer.provide(Layer.succeed(BlobStore, await runtime.runPromise(BlobStore)))))
    const started = starting.runPromiseExit(TestSample)
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    await proxy.heal()
    const exit = await started
    await starting.dispose()
    expect(Exit.isSuccess(exit), String(exit)).toBe(true)
    // it waited for the store rather than failing
    expect(Date.now() - from).toBeGreaterThanOrEqual(1_400)
    expect(await stat("samples/test-mode.mp3")).toMatchObject({ _tag: "Success" })
  }, 60_000)
})

describe("S3 answers cut short", () => {
  it("a HEAD answered without Content-Length is an unavailable store, never an empty object (complete would call it a size mismatch)", async () => {
    // a store whose HEAD answers lose their headers on the way, as a cut connection can leave them
    const server = createServer((request, response) => {
      request.resume()
      response.writeHead(200, { etag: '"x"', "transfer-encoding": "identity" }).end()
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const { port } = server.address() as AddressInfo
    const runtime = ManagedRuntime.make(layerS3BlobStore({
      endpoint: `http://127.0.0.1:${port}`, region: "us-east-1", bucket: "cut", forcePathStyle: true,
      credentials: { accessKeyId: "k", secretAccessKey: "s" }
    }) as Layer.Layer<BlobStore>)
    try {
      const exit = await runtime.runPromiseExit(Effect.flatMap(BlobStore, (store) => store.stat("staging/file_x")))
      const failure = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined
      expect(failure, String(exit)).toBeInstanceOf(BlobError)
      expect(failure?.unavailable).toBe(true)
    } finally {
      await runtime.dispose()
      await new Promise((resolve) => server.close(resolve))
    }
  }, 30_000)
})
