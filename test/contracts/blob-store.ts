/**
 * The BlobStore contract: one suite that any adapter (local disk, S3) must pass. It goes through
 * the store's signed URLs with plain `fetch` over real HTTP, exactly as a client would, so it
 * asserts only what every backend shares (e.g. "refused with 403", "refused with a 4xx"), never
 * one backend's error bodies.
 *
 * Usage: `blobStoreContract("local disk", () => layerWithARunningServer, { partSizeBytes: 64 * 1024 })`.
 * The layer must provide BlobStore whose URLs are served (a running HTTP server, or S3), or
 * `options.exchange` must answer them (the memory store, whose URLs no server answers).
 * Tests use the real clock (`excludeTestServices`), since expiry is judged by the server.
 */
import { randomUUID } from "node:crypto"
import { expect, layer } from "@effect/vitest"
import { Chunk, Clock, type Duration, Effect, Either, type Layer, Option, Stream } from "effect"
import { BlobStore, type UploadTarget } from "../../core/ports/blob-store.js"

export interface BlobStoreContractOptions {
  /** Part size for the multipart tests; S3 needs at least 5 MiB (every part but the last). */
  readonly partSizeBytes: number
  /** Prepended to every key the suite uses (e.g. a per-run folder in a shared bucket). */
  readonly keyPrefix?: string
  /**
   * Whether the store can refuse bytes sent to an upload whose key was moved or deleted (local
   * disk answers 403). S3 cannot: there the bytes land in the old key, which nobody reads.
   */
  readonly refusesClosedUploads: boolean
  readonly timeout?: Duration.DurationInput
}

/** One HTTP exchange with a URL the store signed: `http` (real `fetch`) unless the store answers its own. */
export type Exchange<R> = (url: string, init?: ExchangeInit) => Effect.Effect<HttpResult, never, R>

/** What the suite sends: a method, plain headers and bytes. */
export interface ExchangeInit {
  readonly method?: string
  readonly headers?: Record<string, string>
  readonly body?: Uint8Array
}

export interface HttpResult {
  readonly status: number
  readonly headers: Headers
  readonly body: Uint8Array
}

/** One HTTP exchange; the body is always read so the connection is freed. */
export const http = (url: string, init?: RequestInit | ExchangeInit): Effect.Effect<HttpResult> =>
  Effect.promise(async () => {
    const response = await fetch(url, init as RequestInit)
    const body = new Uint8Array(await response.arrayBuffer())
    return { status: response.status, headers: response.headers, body }
  })

/** Deterministic bytes that differ from one `seed` to another. */
export const bytes = (length: number, seed = 1): Uint8Array => {
  const out = new Uint8Array(length)
  let x = (seed * 2654435761) >>> 0 || 1
  for (let i = 0; i < length; i++) {
    x ^= x << 13
    x >>>= 0
    x ^= x >>> 17
    x ^= x << 5
    x >>>= 0
    out[i] = x & 0xff
  }
  return out
}

const concat = (chunks: Iterable<Uint8Array>): Uint8Array => Buffer.concat([...chunks])

/** Everything `read` streams, gathered for comparison (tests only). */
export const readAll = (key: string) =>
  Effect.flatMap(BlobStore, (store) => Stream.runCollect(store.read(key))).pipe(
    Effect.map((chunks) => concat(Chunk.toReadonlyArray(chunks)))
  )

const expectBytes = (actual: Uint8Array, expected: Uint8Array) => {
  expect(actual.byteLength).toBe(expected.byteLength)
  expect(Buffer.compare(Buffer.from(actual), Buffer.from(expected))).toBe(0)
}

const asPut = (target: UploadTarget) => {
  if (target._tag !== "Put") throw new Error(`expected a PUT upload, got ${target._tag}`)
  return target
}

const asMultipart = (target: UploadTarget) => {
  if (target._tag !== "Multipart") throw new Error(`expected a multipart upload, got ${target._tag}`)
  return target
}

/** The URL with its signature parameter (any query parameter named like `*signature*`) altered. */
export const tamperSignature = (url: string): string => {
  const parsed = new URL(url)
  const name = [...parsed.searchParams.keys()].find((k) => /signature/i.test(k))
  if (name === undefined) throw new Error(`no signature parameter in ${url}`)
  const value = parsed.searchParams.get(name)!
  parsed.searchParams.set(name, (value[0] === "0" ? "1" : "0") + value.slice(1))
  return parsed.toString()
}

/** The same signed query on another key (last path segment replaced). */
export const retarget = (url: string, lastSegment: string): string => {
  const parsed = new URL(url)
  parsed.pathname = parsed.pathname.replace(/[^/]+$/, encodeURIComponent(lastSegment))
  return parsed.toString()
}

export const blobStoreContract = <R = never>(
  name: string,
  makeLayer: () => Layer.Layer<BlobStore | R, unknown>,
  options: BlobStoreContractOptions & { readonly exchange?: Exchange<R> }
): void => {
  const send: Exchange<R> = options.exchange ?? http
  const prefix = options.keyPrefix ?? ""
  const partSize = options.partSizeBytes
  const keyFor = (label: string) => `${prefix}contract/${label}/${randomUUID()}.bin`
  const inOneHour = Effect.map(Clock.currentTimeMillis, (now) => now + 3_600_000)
  const oneMinuteAgo = Effect.map(Clock.currentTimeMillis, (now) => now - 60_000)

  /** PUTs `body` through a fresh signed PUT URL; returns the response. */
  const putVia = (key: string, body: Uint8Array, declaredSize = body.byteLength, contentType = "audio/wav") =>
    Effect.gen(function*() {
      const store = yield* BlobStore
      const target = asPut(
        yield* store.createUpload({ key, contentType, sizeBytes: declaredSize, expiresAt: yield* inOneHour })
      )
      return yield* send(target.url, { method: "PUT", headers: { ...target.headers }, body })
    })

  const download = (key: string, init?: ExchangeInit) =>
    Effect.gen(function*() {
      const store = yield* BlobStore
      const url = yield* store.signDownload({
        key,
        filename: "take.wav",
        contentType: "audio/wav",
        expiresAt: yield* inOneHour
      })
      return yield* send(url, init)
    })

  /** Sends `chunks[i]` to part i+1 of `target` and returns the parts with their ETags. */
  const sendParts = (target: Extract<UploadTarget, { _tag: "Multipart" }>, chunks: ReadonlyArray<Uint8Array>) =>
    Effect.forEach(chunks, (chunk, i) =>
      Effect.gen(function*() {
        const response = yield* send(target.parts[i].url, { method: "PUT", body: chunk })
        expect(response.status).toBe(200)
        const etag = response.headers.get("etag")
        expect(etag).toBeTruthy()
        return { partNumber: target.parts[i].partNumber, etag: etag! }
      }))

  layer(makeLayer(), { timeout: options.timeout ?? "60 seconds", excludeTestServices: true })(
    `BlobStore contract: ${name}`,
    (it) => {
      it.effect("a signed PUT stores the object; stat, read and a signed GET give it back", () =>
        Effect.gen(function*() {
          const store = yield* BlobStore
          const key = keyFor("put")
          const body = bytes(10_000, 7)
          const target = asPut(
            yield* store.createUpload({ key, contentType: "audio/wav", sizeBytes: body.byteLength, expiresAt: yield* inOneHour })
          )
          expect(Object.entries(target.headers).map(([k, v]) => [k.toLowerCase(), v])).toContainEqual([
            "content-type",
            "audio/wav"
          ])
          const response = yield* send(target.url, { method: "PUT", headers: { ...target.headers }, body })
          expect(response.status).toBe(200)
          expect(yield* store.stat(key)).toEqual(Option.some({ sizeBytes: body.byteLength }))
          expectBytes(yield* readAll(key), body)
          const got = yield* download(key)
          expect(got.status).toBe(200)
          expect(got.headers.get("content-type")).toBe("audio/wav")
          expectBytes(got.body, body)
        }))

      it.effect("write streams an object in; read and stat see it; a missing key has no stat and fails read", () =>
        Effect.gen(function*() {
          const store = yield* BlobStore
          const key = keyFor("write")
          const pieces = [bytes(1000, 1), bytes(70_000, 2), bytes(1, 3)]
          const written = yield* store.write(key, Stream.fromIterable(pieces), { contentType: "audio/mpeg" })
          expect(written.sizeBytes).toBe(71_001)
          expect(yield* store.stat(key)).toEqual(Option.some({ sizeBytes: 71_001 }))
          expectBytes(yield* readAll(key), concat(pieces))
          const missing = keyFor("missing")
          expect(yield* store.stat(missing)).toEqual(Option.none())
          const read = yield* Effect.either(readAll(missing))
          expect(Either.isLeft(read) && read.left._tag).toBe("BlobError")
        }))

      it.effect("multipart: three parts with their ETags, completed, read back equal", () =>
        Effect.gen(function*() {
          const store = yield* BlobStore
          const key = keyFor("multipart")
          const size = 2 * partSize + Math.floor(partSize / 2)
          const body = bytes(size, 11)
          const target = asMultipart(
            yield* store.createUpload({
              key,
              contentType: "audio/wav",
              sizeBytes: size,
              expiresAt: yield* inOneHour,
              partSize
            })
          )
          expect(target.parts.map((p) => p.partNumber)).toEqual([1, 2, 3])
          const chunks = [0, 1, 2].map((i) => body.subarray(i * partSize, Math.min(size, (i + 1) * partSize)))
          const parts = yield* sendParts(target, chunks)
          expect(yield* store.stat(key)).toEqual(Option.none())
          yield* store.completeMultipart({ key, uploadId: target.uploadId, parts })
          expect(yield* store.stat(key)).toEqual(Option.some({ sizeBytes: size }))
          expectBytes(yield* readAll(key), body)
          const got = yield* download(key)
          expect(got.status).toBe(200)
          expectBytes(got.body, body)
        }))

      it.effect("complete refuses a wrong ETag and accepts ETags without quotes", () =>
        Effect.gen(function*() {
          const store = yield* BlobStore
          const key = keyFor("etag")
          const body = bytes(1000, 5)
          const target = asMultipart(
            yield* store.createUpload({ key, contentType: "audio/wav", sizeBytes: 1000, expiresAt: yield* inOneHour, partSize })
          )
          expect(target.parts).toHaveLength(1)
          const [part] = yield* sendParts(target, [body])
          const wrongEtag = `"${"0".repeat(32)}"`
          const wrong = yield* Effect.either(
            store.completeMultipart({ key, uploadId: target.uploadId, parts: [{ partNumber: 1, etag: wrongEtag }] })
          )
          expect(Either.isLeft(wrong) && wrong.left._tag).toBe("BlobError")
          expect(yield* store.stat(key)).toEqual(Option.none())
          // ETags are compared without their quotes.
          yield* store.completeMultipart({
            key,
            uploadId: target.uploadId,
            parts: [{ partNumber: 1, etag: part.etag.replace(/"/g, "") }]
          })
          expectBytes(yield* readAll(key), body)
        }))

      it.effect("abort removes a multipart upload, idempotently; its part URLs stop working", () =>
        Effect.gen(function*() {
          const store = yield* BlobStore
          const key = keyFor("abort")
          const target = asMultipart(
            yield* store.createUpload({ key, contentType: "audio/wav", sizeBytes: 10, expiresAt: yield* inOneHour, partSize })
          )
          yield* store.abortMultipart({ key, uploadId: target.uploadId })
          yield* store.abortMultipart({ key, uploadId: target.uploadId })
          const late = yield* send(target.parts[0].url, { method: "PUT", body: bytes(10) })
          expect(late.status).toBeGreaterThanOrEqual(400) // 403 on the local store, 404 on S3 (NoSuchUpload)
          expect(late.status).toBeLessThan(500)
          const complete = yield* Effect.either(
            store.completeMultipart({ key, uploadId: target.uploadId, parts: [{ partNumber: 1, etag: "x" }] })
          )
          expect(Either.isLeft(complete)).toBe(true)
          expect(yield* store.stat(key)).toEqual(Option.none())
        }))

      it.effect("a tampered URL is refused with 403", () =>
        Effect.gen(function*() {
          const store = yield* BlobStore
          const key = keyFor("tamper")
          const other = `other-${randomUUID()}.bin`
          const body = bytes(100)
          const target = asPut(
            yield* store.createUpload({ key, contentType: "audio/wav", sizeBytes: 100, expiresAt: yield* inOneHour })
          )
          const badSignature = yield* send(tamperSignature(target.url), { method: "PUT", headers: { ...target.headers }, body })
          expect(badSignature.status).toBe(403)
          const otherKey = yield* send(retarget(target.url, other), { method: "PUT", headers: { ...target.headers }, body })
          expect(otherKey.status).toBe(403)
          expect(yield* store.stat(key)).toEqual(Option.none())
          expect(yield* store.stat(key.replace(/[^/]+$/, other))).toEqual(Option.none())

          // The untouched URL still works, and its GET cannot be tampered with either.
          expect((yield* send(target.url, { method: "PUT", headers: { ...target.headers }, body })).status).toBe(200)
          const url = yield* store.signDownload({ key, filename: "a.wav", contentType: "audio/wav", expiresAt: yield* inOneHour })
          expect((yield* send(tamperSignature(url))).status).toBe(403)
          const partKey = keyFor("tamper-part")
          const multipart = asMultipart(
            yield* store.createUpload({ key: partKey, contentType: "audio/wav", sizeBytes: 10, expiresAt: yield* inOneHour, partSize })
          )
          expect((yield* send(tamperSignature(multipart.parts[0].url), { method: "PUT", body: bytes(10) })).status).toBe(403)
          yield* store.abortMultipart({ key: partKey, uploadId: multipart.uploadId })
        }))

      it.effect("an expired URL is refused with 403", () =>
        Effect.gen(function*() {
          const store = yield* BlobStore
          const key = keyFor("expired")
          const body = bytes(100)
          const target = asPut(
            yield* store.createUpload({ key, contentType: "audio/wav", sizeBytes: 100, expiresAt: yield* oneMinuteAgo })
          )
          const response = yield* send(target.url, { method: "PUT", headers: { ...target.headers }, body })
          expect(response.status).toBe(403)
          expect(yield* store.stat(key)).toEqual(Option.none())

          yield* store.write(key, Stream.make(body), { contentType: "audio/wav" })
          const url = yield* store.signDownload({ key, filename: "a.wav", contentType: "audio/wav", expiresAt: yield* oneMinuteAgo })
          expect((yield* send(url)).status).toBe(403)
        }))

      it.effect("a PUT whose body is shorter or longer than the signed size is refused", () =>
        Effect.gen(function*() {
          const store = yield* BlobStore
          const short = keyFor("short")
          const shortResponse = yield* putVia(short, bytes(99), 100)
          expect(shortResponse.status).toBeGreaterThanOrEqual(400)
          expect(shortResponse.status).toBeLessThan(500)
          expect(yield* store.stat(short)).toEqual(Option.none())
          const long = keyFor("long")
          const longResponse = yield* putVia(long, bytes(101), 100)
          expect(longResponse.status).toBeGreaterThanOrEqual(400)
          expect(longResponse.status).toBeLessThan(500)
          expect(yield* store.stat(long)).toEqual(Option.none())
        }))

      it.effect("a part longer or shorter than its signed share is refused; nothing oversized is assembled", () =>
        Effect.gen(function*() {
          const store = yield* BlobStore
          const key = keyFor("exact-parts")
          const declared = 2 * partSize + 100
          const target = asMultipart(
            yield* store.createUpload({ key, contentType: "audio/wav", sizeBytes: declared, expiresAt: yield* inOneHour, partSize })
          )
          expect(target.parts).toHaveLength(3)
          // the last part's share is 100 bytes: 160 (or 60) are refused, whatever the other parts
          for (const wrong of [160, 60]) {
            const refused = yield* send(target.parts[2].url, { method: "PUT", body: bytes(wrong, 3) })
            expect(refused.status).toBeGreaterThanOrEqual(400)
            expect(refused.status).toBeLessThan(500)
          }
          const oversizedFirst = yield* send(target.parts[0].url, { method: "PUT", body: bytes(partSize + 1, 1) })
          expect(oversizedFirst.status).toBeGreaterThanOrEqual(400)
          expect(oversizedFirst.status).toBeLessThan(500)
          const parts = yield* sendParts(target, [bytes(partSize, 1), bytes(partSize, 2), bytes(100, 3)])
          yield* store.completeMultipart({ key, uploadId: target.uploadId, parts })
          expect(yield* store.stat(key)).toEqual(Option.some({ sizeBytes: declared }))
        }))

      it.effect("a bounded upload (sizeIsMaximum) takes a part shorter than the bound", () =>
        Effect.gen(function*() {
          const store = yield* BlobStore
          const key = keyFor("bounded")
          const target = asMultipart(
            yield* store.createUpload({
              key, contentType: "audio/mpeg", sizeBytes: 10_000, partSize: 10_000, sizeIsMaximum: true, expiresAt: yield* inOneHour
            })
          )
          expect(target.parts).toHaveLength(1)
          const body = bytes(4_321, 51)
          const parts = yield* sendParts(target, [body])
          yield* store.completeMultipart({ key, uploadId: target.uploadId, parts })
          expectBytes(yield* readAll(key), body)
        }))

      it.effect("move puts the object under its new key and removes the old one; a late PUT never changes it", () =>
        Effect.gen(function*() {
          const store = yield* BlobStore
          const staged = keyFor("staged")
          const input = keyFor("input")
          const body = bytes(5_000, 21)
          const target = asPut(
            yield* store.createUpload({ key: staged, contentType: "audio/wav", sizeBytes: body.byteLength, expiresAt: yield* inOneHour })
          )
          expect((yield* send(target.url, { method: "PUT", headers: { ...target.headers }, body })).status).toBe(200)
          expect(yield* store.move({ from: staged, to: input })).toEqual({ sizeBytes: body.byteLength })
          expect(yield* store.stat(staged)).toEqual(Option.none())
          expectBytes(yield* readAll(input), body)

          // the same URL again, with other bytes of the same size
          const late = yield* send(target.url, { method: "PUT", headers: { ...target.headers }, body: bytes(5_000, 22) })
          if (options.refusesClosedUploads) {
            expect(late.status).toBe(403)
            expect(yield* store.stat(staged)).toEqual(Option.none())
          } else {
            // they land under the old key, which nobody reads, and show in a listing for the sweeper
            expect(late.status).toBe(200)
            const listed = yield* Stream.runCollect(store.list(staged))
            expect(Chunk.toReadonlyArray(listed).map((o) => [o.key, o.sizeBytes])).toEqual([[staged, 5_000]])
          }
          expectBytes(yield* readAll(input), body)
          const gone = yield* Effect.either(store.move({ from: keyFor("never-existed"), to: keyFor("nowhere") }))
          expect(Either.isLeft(gone) && gone.left._tag).toBe("BlobError")
        }))

      it.effect("move of an assembled multipart upload; its part URLs take no more bytes afterwards", () =>
        Effect.gen(function*() {
          const store = yield* BlobStore
          const staged = keyFor("staged-multipart")
          const input = keyFor("input-multipart")
          const size = partSize + 1_000
          const body = bytes(size, 31)
          const target = asMultipart(
            yield* store.createUpload({ key: staged, contentType: "audio/wav", sizeBytes: size, expiresAt: yield* inOneHour, partSize })
          )
          const parts = yield* sendParts(target, [body.subarray(0, partSize), body.subarray(partSize)])
          yield* store.completeMultipart({ key: staged, uploadId: target.uploadId, parts })
          expect(yield* store.move({ from: staged, to: input })).toEqual({ sizeBytes: size })
          const late = yield* send(target.parts[1].url, { method: "PUT", body: bytes(1_000, 32) })
          expect(late.status).toBeGreaterThanOrEqual(400)
          expect(late.status).toBeLessThan(500)
          expectBytes(yield* readAll(input), body)
          expect(yield* store.stat(staged)).toEqual(Option.none())
        }))

      it.effect("delete closes the upload of its key: a PUT afterwards is refused, or lands where nobody reads", () =>
        Effect.gen(function*() {
          const store = yield* BlobStore
          const staged = keyFor("deleted-upload")
          const body = bytes(700, 41)
          const target = asPut(
            yield* store.createUpload({ key: staged, contentType: "audio/wav", sizeBytes: body.byteLength, expiresAt: yield* inOneHour })
          )
          expect((yield* send(target.url, { method: "PUT", headers: { ...target.headers }, body })).status).toBe(200)
          yield* store.delete(staged)
          const late = yield* send(target.url, { method: "PUT", headers: { ...target.headers }, body })
          if (options.refusesClosedUploads) {
            expect(late.status).toBe(403)
            expect(yield* store.stat(staged)).toEqual(Option.none())
          } else {
            expect(late.status).toBe(200)
          }
        }))

      it.effect("list gives the objects under a prefix with their sizes and times", () =>
        Effect.gen(function*() {
          const store = yield* BlobStore
          const folder = `${prefix}contract/list-${randomUUID()}/`
          const before = yield* Clock.currentTimeMillis
          yield* store.write(`${folder}a`, Stream.make(bytes(10)), { contentType: "audio/wav" })
          yield* store.write(`${folder}b/c`, Stream.make(bytes(20)), { contentType: "audio/wav" })
          yield* store.write(`${prefix}contract/list-elsewhere-${randomUUID()}`, Stream.make(bytes(5)), { contentType: "audio/wav" })
          const listed = Chunk.toReadonlyArray(yield* Stream.runCollect(store.list(folder)))
          expect(listed.map((o) => [o.key, o.sizeBytes]).sort()).toEqual([[`${folder}a`, 10], [`${folder}b/c`, 20]])
          // S3 keeps whole seconds
          for (const object of listed) expect(object.modifiedAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 - 1000)
          expect(Chunk.toReadonlyArray(yield* Stream.runCollect(store.list(`${folder}b/`))).map((o) => o.key)).toEqual([`${folder}b/c`])
          expect(Chunk.size(yield* Stream.runCollect(store.list(`${prefix}contract/no-such-folder-${randomUUID()}/`)))).toBe(0)
        }))

      it.effect("a signed GET honours Range: bytes=N-M and bytes=N-, and answers 416 beyond the end", () =>
        Effect.gen(function*() {
          const store = yield* BlobStore
          const key = keyFor("range")
          const body = bytes(1000, 3)
          yield* store.write(key, Stream.make(body), { contentType: "audio/wav" })
          const middle = yield* download(key, { headers: { range: "bytes=10-19" } })
          expect(middle.status).toBe(206)
          expect(middle.headers.get("content-range")).toBe("bytes 10-19/1000")
          expectBytes(middle.body, body.subarray(10, 20))
          const tail = yield* download(key, { headers: { range: "bytes=990-" } })
          expect(tail.status).toBe(206)
          expect(tail.headers.get("content-range")).toBe("bytes 990-999/1000")
          expectBytes(tail.body, body.subarray(990))
          const clamped = yield* download(key, { headers: { range: "bytes=995-5000" } })
          expect(clamped.status).toBe(206)
          expectBytes(clamped.body, body.subarray(995))
          const beyond = yield* download(key, { headers: { range: "bytes=1000-" } })
          expect(beyond.status).toBe(416)
          const whole = yield* download(key)
          expect(whole.status).toBe(200)
          expect(whole.headers.get("content-length")).toBe("1000")
          expectBytes(whole.body, body)
        }))

      it.effect("delete: stat is None, a signed GET answers 404, deleting again succeeds", () =>
        Effect.gen(function*() {
          const store = yield* BlobStore
          const key = keyFor("delete")
          expect((yield* putVia(key, bytes(500))).status).toBe(200)
          expect(Option.isSome(yield* store.stat(key))).toBe(true)
          yield* store.delete(key)
          expect(yield* store.stat(key)).toEqual(Option.none())
          expect((yield* download(key)).status).toBe(404)
          yield* store.delete(key)
          yield* store.delete(keyFor("never-existed"))
        }))
    }
  )
}
