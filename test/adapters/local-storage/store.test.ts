import { createHash } from "node:crypto"
import * as Fs from "node:fs/promises"
import { createServer, request as httpRequest } from "node:http"
import * as Os from "node:os"
import * as NodePath from "node:path"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, it, layer } from "@effect/vitest"
import { Clock, Context, Effect, Either, Layer, Option, Schema, Stream } from "effect"
import {
  contentDisposition,
  LocalStorageConfig,
  localStorageRouter,
  localStorageRoutes,
  layerLocalStorage,
  parseRange,
  sweepStale
} from "../../../adapters/local-storage/index.js"
import { resolveConfig } from "../../../adapters/local-storage/config.js"
import { BlobStore, type UploadTarget } from "../../../core/ports/blob-store.js"
import { blobStoreContract, bytes, http, readAll } from "../../contracts/blob-store.js"

const PART_SIZE = 64 * 1024

/** Where the test server listens and where the store keeps its files. */
class TestStorage extends Context.Tag("test/TestStorage")<TestStorage, {
  readonly baseUrl: string
  readonly rootDir: string
}>() {}

/**
 * A local store in a fresh temp folder, its `/storage/*` router served by a real node:http
 * server on a random port of 127.0.0.1 (the store's publicBaseUrl points there).
 */
const LocalStorageTest: Layer.Layer<BlobStore | LocalStorageConfig | TestStorage> = Layer.unwrapScoped(
  Effect.gen(function*() {
    const rootDir = yield* Effect.acquireRelease(
      Effect.promise(() => Fs.mkdtemp(NodePath.join(Os.tmpdir(), "hush-storage-"))),
      (dir) => Effect.promise(() => Fs.rm(dir, { recursive: true, force: true }))
    )
    const server = yield* NodeHttpServer.make(() => createServer(), { port: 0, host: "127.0.0.1" }).pipe(Effect.orDie)
    if (server.address._tag !== "TcpAddress") return yield* Effect.dieMessage("expected a TCP address")
    const baseUrl = `http://127.0.0.1:${server.address.port}`
    const options = { rootDir, publicBaseUrl: baseUrl, signingSecret: "test-signing-secret" }
    yield* server.serve(localStorageRouter).pipe(Effect.provideService(LocalStorageConfig, resolveConfig(options)))
    return Layer.merge(layerLocalStorage(options), Layer.succeed(TestStorage, { baseUrl, rootDir }))
  })
)

blobStoreContract("local disk", () => LocalStorageTest, { partSizeBytes: PART_SIZE, refusesClosedUploads: true })

const inOneHour = Effect.map(Clock.currentTimeMillis, (now) => now + 3_600_000)

const asPut = (target: UploadTarget) => {
  if (target._tag !== "Put") throw new Error("expected PUT")
  return target
}
const asMultipart = (target: UploadTarget) => {
  if (target._tag !== "Multipart") throw new Error("expected multipart")
  return target
}

/** A raw HTTP request, so the path reaches the server exactly as written (fetch normalises `..`). */
const rawRequest = (baseUrl: string, method: string, path: string) =>
  Effect.async<{ status: number; body: string }>((resume) => {
    const url = new URL(baseUrl)
    const req = httpRequest({ host: url.hostname, port: url.port, method, path }, (res) => {
      let body = ""
      res.setEncoding("utf8")
      res.on("data", (chunk: string) => (body += chunk))
      res.on("end", () => resume(Effect.succeed({ status: res.statusCode ?? 0, body })))
    })
    req.on("error", (error) => resume(Effect.die(error)))
    req.end()
  })

const listDir = (path: string) => Effect.promise(() => Fs.readdir(path).catch(() => [] as Array<string>))

layer(LocalStorageTest, { excludeTestServices: true })("local storage: local-only checks", (it) => {
  it.effect("keys with '..', '.', empty segments or a leading '/' are refused", () =>
    Effect.gen(function*() {
      const store = yield* BlobStore
      const expiresAt = yield* inOneHour
      for (const key of ["../escape", "a/../../b", "a/./b", "a//b", "/abs/key", "a\\b", "", "x/.."]) {
        const results: Array<Either.Either<unknown, { readonly _tag: string }>> = [
          yield* Effect.either(store.createUpload({ key, contentType: "audio/wav", sizeBytes: 1, expiresAt })),
          yield* Effect.either(store.write(key, Stream.make(bytes(1)), { contentType: "audio/wav" })),
          yield* Effect.either(store.stat(key)),
          yield* Effect.either(store.delete(key)),
          yield* Effect.either(store.signDownload({ key, filename: "a", contentType: "audio/wav", expiresAt })),
          yield* Effect.either(readAll(key))
        ]
        for (const result of results) {
          expect(Either.isLeft(result) && result.left._tag, `key ${JSON.stringify(key)}`).toBe("BlobError")
        }
      }
      const { baseUrl, rootDir } = yield* TestStorage
      // Straight to the handler, encoded so that no URL parser folds the dots away.
      const escaped = yield* rawRequest(baseUrl, "GET", "/storage/a/%2E%2E/%2E%2E/etc?x-hush-op=get")
      expect(escaped.status).toBe(400)
      expect(JSON.parse(escaped.body).detail).toMatch(/\.\./)
      const slash = yield* rawRequest(baseUrl, "PUT", "/storage/..%2Fescape?x-hush-op=put")
      expect(slash.status).toBe(400)
      expect(yield* listDir(NodePath.dirname(rootDir))).not.toContain("escape")
    }))

  it.effect("a PUT with another Content-Type, or without Content-Length, is refused with 400", () =>
    Effect.gen(function*() {
      const store = yield* BlobStore
      const { rootDir } = yield* TestStorage
      const key = "local/content-type.wav"
      const body = bytes(100)
      const target = asPut(yield* store.createUpload({ key, contentType: "audio/wav", sizeBytes: 100, expiresAt: yield* inOneHour }))
      const wrongType = yield* http(target.url, { method: "PUT", headers: { "content-type": "audio/mpeg" }, body })
      expect(wrongType.status).toBe(400)
      expect(wrongType.headers.get("content-type")).toBe("application/problem+json")
      expect(JSON.parse(Buffer.from(wrongType.body).toString()).detail).toContain("Content-Type")
      const noType = yield* http(target.url, { method: "PUT", body })
      expect(noType.status).toBe(400)

      // A streamed (chunked) body carries no Content-Length.
      const chunked = yield* Effect.promise(() =>
        fetch(target.url, {
          method: "PUT",
          headers: { ...target.headers },
          body: new ReadableStream({
            start(controller) {
              controller.enqueue(body)
              controller.close()
            }
          }),
          duplex: "half"
        } as RequestInit).then(async (r) => ({ status: r.status, text: await r.text() }))
      )
      expect(chunked.status).toBe(400)
      expect(chunked.text).toContain("Content-Length")
      const tooLong = yield* http(target.url, { method: "PUT", headers: { ...target.headers }, body: bytes(101) })
      expect(tooLong.status).toBe(400)
      expect(yield* store.stat(key)).toEqual(Option.none())
      expect(yield* listDir(NodePath.join(rootDir, "tmp"))).toEqual([])

      const ok = yield* http(target.url, { method: "PUT", headers: { ...target.headers }, body })
      expect(ok.status).toBe(200)
      expect(ok.headers.get("etag")).toBe(`"${createHash("md5").update(body).digest("hex")}"`)
    }))

  it.effect("a signed GET sends Content-Disposition with the signed filename, Content-Type and Accept-Ranges", () =>
    Effect.gen(function*() {
      const store = yield* BlobStore
      const key = "local/download.mp3"
      const body = bytes(300)
      yield* store.write(key, Stream.make(body), { contentType: "audio/mpeg" })
      const url = yield* store.signDownload({
        key,
        filename: "Interview été \"final\".denoised.mp3",
        contentType: "audio/mpeg",
        expiresAt: yield* inOneHour
      })
      const got = yield* http(url)
      expect(got.status).toBe(200)
      expect(got.headers.get("content-type")).toBe("audio/mpeg")
      expect(got.headers.get("content-length")).toBe("300")
      expect(got.headers.get("accept-ranges")).toBe("bytes")
      expect(got.headers.get("content-disposition")).toBe(
        "attachment; filename=\"Interview _t_ _final_.denoised.mp3\"; " +
          "filename*=UTF-8''Interview%20%C3%A9t%C3%A9%20%22final%22.denoised.mp3"
      )
      const head = yield* http(url, { method: "HEAD" })
      expect(head.status).toBe(200)
      expect(head.headers.get("content-length")).toBe("300")
      expect(head.body.byteLength).toBe(0)
      // The signature covers the filename and content type.
      const renamed = new URL(url)
      renamed.searchParams.set("x-hush-filename", "other.mp3")
      expect((yield* http(renamed.toString())).status).toBe(403)
      // A GET URL does not allow PUT.
      expect((yield* http(url, { method: "PUT", body: bytes(300) })).status).toBe(403)
    }))

  it.effect("methods other than GET, HEAD and PUT get 405 with Allow", () =>
    Effect.gen(function*() {
      const store = yield* BlobStore
      const key = "local/method.wav"
      yield* store.write(key, Stream.make(bytes(10)), { contentType: "audio/wav" })
      const url = yield* store.signDownload({ key, filename: "m.wav", contentType: "audio/wav", expiresAt: yield* inOneHour })
      for (const method of ["DELETE", "POST", "PATCH"]) {
        const response = yield* http(url, { method })
        expect(response.status).toBe(405)
        expect(response.headers.get("allow")).toBe("GET, HEAD, PUT")
      }
      expect(Option.isSome(yield* store.stat(key))).toBe(true)
    }))

  it.effect("multipart: a part over the signed part size is refused; re-sent parts replace; staging is removed", () =>
    Effect.gen(function*() {
      const store = yield* BlobStore
      const { rootDir } = yield* TestStorage
      const key = "local/multipart.wav"
      const size = PART_SIZE + 10
      const target = asMultipart(
        yield* store.createUpload({ key, contentType: "audio/wav", sizeBytes: size, expiresAt: yield* inOneHour, partSize: PART_SIZE })
      )
      expect(target.uploadId).toMatch(/^[0-9a-f]{32}$/)
      expect(yield* listDir(NodePath.join(rootDir, "uploads"))).toContain(target.uploadId)
      const tooBig = yield* http(target.parts[0].url, { method: "PUT", body: bytes(PART_SIZE + 1) })
      expect(tooBig.status).toBe(400)
      const first = yield* http(target.parts[0].url, { method: "PUT", body: bytes(PART_SIZE, 1) })
      const firstAgain = yield* http(target.parts[0].url, { method: "PUT", body: bytes(PART_SIZE, 9) })
      const second = yield* http(target.parts[1].url, { method: "PUT", body: bytes(10, 2) })
      expect([first.status, firstAgain.status, second.status]).toEqual([200, 200, 200])
      expect(firstAgain.headers.get("etag")).not.toBe(first.headers.get("etag"))
      const stale = yield* Effect.either(store.completeMultipart({
        key,
        uploadId: target.uploadId,
        parts: [{ partNumber: 1, etag: first.headers.get("etag")! }, { partNumber: 2, etag: second.headers.get("etag")! }]
      }))
      expect(Either.isLeft(stale)).toBe(true)
      yield* store.completeMultipart({
        key,
        uploadId: target.uploadId,
        parts: [{ partNumber: 2, etag: second.headers.get("etag")! }, { partNumber: 1, etag: firstAgain.headers.get("etag")! }]
      })
      const stored = yield* readAll(key)
      expect(Buffer.compare(stored, Buffer.concat([bytes(PART_SIZE, 9), bytes(10, 2)]))).toBe(0)
      expect(yield* listDir(NodePath.join(rootDir, "uploads"))).not.toContain(target.uploadId)
      expect(yield* listDir(NodePath.join(rootDir, "tmp"))).toEqual([])
    }))

  it.effect("abort removes the staging folder; a part sent afterwards gets 403", () =>
    Effect.gen(function*() {
      const store = yield* BlobStore
      const { rootDir } = yield* TestStorage
      const key = "local/aborted.wav"
      const target = asMultipart(
        yield* store.createUpload({ key, contentType: "audio/wav", sizeBytes: 10, expiresAt: yield* inOneHour, partSize: PART_SIZE })
      )
      expect((yield* http(target.parts[0].url, { method: "PUT", body: bytes(10) })).status).toBe(200)
      yield* store.abortMultipart({ key, uploadId: target.uploadId })
      expect(yield* listDir(NodePath.join(rootDir, "uploads"))).not.toContain(target.uploadId)
      expect((yield* http(target.parts[0].url, { method: "PUT", body: bytes(10) })).status).toBe(403)
      // Another key cannot abort (or complete) this upload.
      const other = asMultipart(
        yield* store.createUpload({ key, contentType: "audio/wav", sizeBytes: 10, expiresAt: yield* inOneHour, partSize: PART_SIZE })
      )
      const wrongKey = yield* Effect.either(store.abortMultipart({ key: "local/other.wav", uploadId: other.uploadId }))
      expect(Either.isLeft(wrongKey)).toBe(true)
      expect(yield* listDir(NodePath.join(rootDir, "uploads"))).toContain(other.uploadId)
    }))

  it.effect("a client that stops mid-upload leaves no object and no temp file", () =>
    Effect.gen(function*() {
      const store = yield* BlobStore
      const { rootDir } = yield* TestStorage
      const key = "local/interrupted.wav"
      const target = asPut(yield* store.createUpload({ key, contentType: "audio/wav", sizeBytes: 100_000, expiresAt: yield* inOneHour }))
      yield* Effect.async<void>((resume) => {
        const url = new URL(target.url)
        const req = httpRequest({
          host: url.hostname,
          port: url.port,
          method: "PUT",
          path: url.pathname + url.search,
          headers: { "content-type": "audio/wav", "content-length": "100000" }
        })
        req.on("error", () => undefined)
        req.write(bytes(1000))
        setTimeout(() => {
          req.destroy()
          resume(Effect.void)
        }, 100)
      })
      yield* Effect.sleep("300 millis")
      expect(yield* store.stat(key)).toEqual(Option.none())
      expect(yield* listDir(NodePath.join(rootDir, "tmp"))).toEqual([])
    }))

  it.effect("sweepStale removes expired open-upload records only: an open PUT upload keeps working", () =>
    Effect.gen(function*() {
      const store = yield* BlobStore
      const { rootDir } = yield* TestStorage
      const now = yield* Clock.currentTimeMillis
      const open = asPut(yield* store.createUpload({ key: "local/open-put.wav", contentType: "audio/wav", sizeBytes: 10, expiresAt: now + 60_000 }))
      yield* store.createUpload({ key: "local/lapsed-put.wav", contentType: "audio/wav", sizeBytes: 10, expiresAt: now - 1 })
      const record = (key: string) => createHash("sha256").update(key).digest("hex")
      expect(yield* listDir(NodePath.join(rootDir, "open"))).toEqual(
        expect.arrayContaining([record("local/open-put.wav"), record("local/lapsed-put.wav")])
      )
      yield* sweepStale()
      const left = yield* listDir(NodePath.join(rootDir, "open"))
      expect(left).toContain(record("local/open-put.wav"))
      expect(left).not.toContain(record("local/lapsed-put.wav"))
      expect((yield* http(open.url, { method: "PUT", headers: { ...open.headers }, body: bytes(10) })).status).toBe(200)
      yield* store.delete("local/open-put.wav")
      expect(yield* listDir(NodePath.join(rootDir, "open"))).not.toContain(record("local/open-put.wav"))
    }))

  it.effect("sweepStale removes expired staging folders and old temp files only", () =>
    Effect.gen(function*() {
      const store = yield* BlobStore
      const { rootDir } = yield* TestStorage
      const now = yield* Clock.currentTimeMillis
      const live = asMultipart(
        yield* store.createUpload({ key: "local/live.wav", contentType: "audio/wav", sizeBytes: 10, expiresAt: now + 60_000, partSize: PART_SIZE })
      )
      const expired = asMultipart(
        yield* store.createUpload({ key: "local/expired.wav", contentType: "audio/wav", sizeBytes: 10, expiresAt: now - 1, partSize: PART_SIZE })
      )
      const oldTemp = NodePath.join(rootDir, "tmp", "old.tmp")
      yield* Effect.promise(async () => {
        await Fs.writeFile(oldTemp, "x")
        const past = new Date(now - 48 * 3_600_000)
        await Fs.utimes(oldTemp, past, past)
        await Fs.writeFile(NodePath.join(rootDir, "tmp", "new.tmp"), "x")
      })
      const removed = yield* sweepStale()
      expect(removed).toBeGreaterThanOrEqual(2)
      const uploads = yield* listDir(NodePath.join(rootDir, "uploads"))
      expect(uploads).toContain(live.uploadId)
      expect(uploads).not.toContain(expired.uploadId)
      expect(yield* listDir(NodePath.join(rootDir, "tmp"))).toEqual(["new.tmp"])
      yield* Effect.promise(() => Fs.rm(NodePath.join(rootDir, "tmp", "new.tmp")))
    }))

  it.effect("a larger object streams through write, read and GET intact", () =>
    Effect.gen(function*() {
      const store = yield* BlobStore
      const key = "local/large.bin"
      const chunk = bytes(256 * 1024, 4)
      const count = 24 // 6 MiB
      const { sizeBytes } = yield* store.write(key, Stream.fromIterable(Array.from({ length: count }, () => chunk)), {
        contentType: "application/octet-stream"
      })
      expect(sizeBytes).toBe(chunk.byteLength * count)
      const hash = createHash("md5")
      let n = 0
      yield* Stream.runForEach(store.read(key), (piece) => Effect.sync(() => {
        n += piece.byteLength
        hash.update(piece)
      }))
      const expected = createHash("md5")
      for (let i = 0; i < count; i++) expected.update(chunk)
      expect(n).toBe(sizeBytes)
      expect(hash.digest("hex")).toBe(expected.digest("hex"))
      const url = yield* store.signDownload({ key, filename: "l.bin", contentType: "application/octet-stream", expiresAt: yield* inOneHour })
      const got = yield* http(url, { headers: { range: "bytes=262140-262147" } })
      expect(got.status).toBe(206)
      expect(Buffer.compare(got.body, Buffer.concat([chunk.subarray(262140), chunk.subarray(0, 4)]))).toBe(0)
    }))
})

/** A tiny HttpApi served with `localStorageRoutes` beside it, as the API app mounts it. */
class TestApi extends HttpApi.make("test").add(
  HttpApiGroup.make("health").add(
    HttpApiEndpoint.get("health", "/v1/health").addSuccess(Schema.Struct({ ok: Schema.Boolean }))
  )
) {}

const ApiWithStorage: Layer.Layer<BlobStore | TestStorage> = Layer.unwrapScoped(
  Effect.gen(function*() {
    const rootDir = yield* Effect.acquireRelease(
      Effect.promise(() => Fs.mkdtemp(NodePath.join(Os.tmpdir(), "hush-storage-api-"))),
      (dir) => Effect.promise(() => Fs.rm(dir, { recursive: true, force: true }))
    )
    const server = yield* NodeHttpServer.make(() => createServer(), { port: 0, host: "127.0.0.1" }).pipe(Effect.orDie)
    if (server.address._tag !== "TcpAddress") return yield* Effect.dieMessage("expected a TCP address")
    const baseUrl = `http://127.0.0.1:${server.address.port}`
    const HealthLive = HttpApiBuilder.group(TestApi, "health", (handlers) =>
      handlers.handle("health", () => Effect.succeed({ ok: true })))
    const ApiLive = HttpApiBuilder.api(TestApi).pipe(Layer.provide(HealthLive))
    return HttpApiBuilder.serve().pipe(
      Layer.provide(localStorageRoutes),
      Layer.provide(ApiLive),
      Layer.provideMerge(layerLocalStorage({ rootDir, publicBaseUrl: baseUrl, signingSecret: "api-secret" })),
      Layer.provide(Layer.succeed(HttpServer.HttpServer, server)),
      Layer.provide(NodeHttpServer.layerContext),
      Layer.merge(Layer.succeed(TestStorage, { baseUrl, rootDir }))
    )
  })
)

layer(ApiWithStorage, { excludeTestServices: true })("local storage mounted beside an HttpApi", (it) => {
  it.effect("serves /v1 and /storage from one server", () =>
    Effect.gen(function*() {
      const store = yield* BlobStore
      const { baseUrl } = yield* TestStorage
      const health = yield* http(`${baseUrl}/v1/health`)
      expect(health.status).toBe(200)
      expect(JSON.parse(Buffer.from(health.body).toString())).toEqual({ ok: true })
      const key = "api/one.wav"
      const body = bytes(2000, 8)
      const target = asPut(yield* store.createUpload({ key, contentType: "audio/wav", sizeBytes: 2000, expiresAt: yield* inOneHour }))
      expect(target.url.startsWith(`${baseUrl}/storage/api/one.wav?`)).toBe(true)
      expect((yield* http(target.url, { method: "PUT", headers: { ...target.headers }, body })).status).toBe(200)
      const url = yield* store.signDownload({ key, filename: "one.wav", contentType: "audio/wav", expiresAt: yield* inOneHour })
      const got = yield* http(url, { headers: { range: "bytes=0-99" } })
      expect(got.status).toBe(206)
      expect(Buffer.compare(got.body, body.subarray(0, 100))).toBe(0)
      expect((yield* http(url, { method: "DELETE" })).status).toBe(405)
      expect((yield* http(url.replace("x-hush-signature=", "x-hush-signature=A"))).status).toBe(403)
    }))
})

describe("local storage helpers", () => {
  it("parseRange", () => {
    expect(parseRange(undefined, 100)).toEqual({ _tag: "Full" })
    expect(parseRange("bytes=0-9", 100)).toEqual({ _tag: "Partial", start: 0, end: 9 })
    expect(parseRange("bytes=90-", 100)).toEqual({ _tag: "Partial", start: 90, end: 99 })
    expect(parseRange("bytes=-10", 100)).toEqual({ _tag: "Partial", start: 90, end: 99 })
    expect(parseRange("bytes=50-500", 100)).toEqual({ _tag: "Partial", start: 50, end: 99 })
    expect(parseRange("bytes=100-", 100)).toEqual({ _tag: "Unsatisfiable" })
    expect(parseRange("bytes=0-", 0)).toEqual({ _tag: "Unsatisfiable" })
    expect(parseRange("bytes=9-3", 100)).toEqual({ _tag: "Full" })
    expect(parseRange("bytes=0-1,5-6", 100)).toEqual({ _tag: "Full" })
    expect(parseRange("items=0-1", 100)).toEqual({ _tag: "Full" })
  })

  it("contentDisposition", () => {
    expect(contentDisposition("a.wav")).toBe("attachment; filename=\"a.wav\"; filename*=UTF-8''a.wav")
    expect(contentDisposition("x'(1)*.mp3")).toBe("attachment; filename=\"x'(1)*.mp3\"; filename*=UTF-8''x%27%281%29%2A.mp3")
  })
})
