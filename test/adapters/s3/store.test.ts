import { createHash } from "node:crypto"
import { describe, expect, it, layer } from "@effect/vitest"
import { Chunk, Clock, ConfigProvider, Context, Effect, Either, Layer, Option, Redacted, Stream } from "effect"
import {
  MAX_PRESIGN_SECONDS,
  layerS3BlobStore,
  MIN_PART_SIZE,
  normalizeEtag,
  presignWindow,
  S3Config
} from "../../../adapters/s3/index.js"
import { BlobError, BlobStore, type UploadTarget } from "../../../core/ports/blob-store.js"
import { blobStoreContract, bytes, http, readAll, tamperSignature } from "../../contracts/blob-store.js"
import { type RunningS3rver, startS3rver } from "../../support/s3rver.js"

/** S3's minimum part size: every part but the last is at least 5 MiB. */
const PART_SIZE = MIN_PART_SIZE

const S3Test: Layer.Layer<BlobStore> = Layer.unwrapScoped(
  Effect.map(startS3rver(), (server) => layerS3BlobStore(server.options))
)

blobStoreContract("S3 (s3rver)", () => S3Test, { partSizeBytes: PART_SIZE, refusesClosedUploads: false, timeout: "120 seconds" })

class TestS3 extends Context.Tag("test/TestS3")<TestS3, RunningS3rver>() {}

/** s3rver plus a store on it whose `write` switches to multipart past 5 MiB, and `move` to UploadPartCopy. */
const S3WithServer: Layer.Layer<BlobStore | TestS3> = Layer.unwrapScoped(
  Effect.map(startS3rver({ bucket: "hush-s3-only" }), (server) =>
    Layer.merge(
      layerS3BlobStore({ ...server.options, writePartSizeBytes: PART_SIZE, singleCopyMaxBytes: PART_SIZE, copyPartSizeBytes: PART_SIZE }),
      Layer.succeed(TestS3, server)
    ))
)

const inOneHour = Effect.map(Clock.currentTimeMillis, (now) => now + 3_600_000)

const asPut = (target: UploadTarget) => {
  if (target._tag !== "Put") throw new Error("expected PUT")
  return target
}

const md5 = (pieces: Iterable<Uint8Array>) => {
  const hash = createHash("md5")
  for (const piece of pieces) hash.update(piece)
  return hash.digest("hex")
}

layer(S3WithServer, { excludeTestServices: true, timeout: "120 seconds" })("S3 store: S3-only checks", (it) => {
  it.effect("a signed GET answers with the Content-Disposition and Content-Type it was signed for", () =>
    Effect.gen(function*() {
      const store = yield* BlobStore
      const key = "s3/disposition.mp3"
      yield* store.write(key, Stream.make(bytes(300)), { contentType: "application/octet-stream" })
      const url = yield* store.signDownload({
        key,
        filename: "Interview été \"final\".denoised.mp3",
        contentType: "audio/mpeg",
        expiresAt: yield* inOneHour
      })
      const got = yield* http(url)
      expect(got.status).toBe(200)
      expect(got.headers.get("content-type")).toBe("audio/mpeg")
      expect(got.headers.get("content-disposition")).toBe(
        "attachment; filename=\"Interview _t_ _final_.denoised.mp3\"; " +
          "filename*=UTF-8''Interview%20%C3%A9t%C3%A9%20%22final%22.denoised.mp3"
      )
      // The overrides are signed: another filename invalidates the URL.
      const renamed = new URL(url)
      renamed.searchParams.set("response-content-disposition", "attachment; filename=\"other.mp3\"")
      expect((yield* http(renamed.toString())).status).toBe(403)
      expect((yield* http(tamperSignature(url))).status).toBe(403)
    }))

  it.effect("a signed PUT refuses another Content-Type than the signed one", () =>
    Effect.gen(function*() {
      const store = yield* BlobStore
      const key = "s3/content-type.wav"
      const target = asPut(yield* store.createUpload({ key, contentType: "audio/wav", sizeBytes: 10, expiresAt: yield* inOneHour }))
      expect(target.url).toMatch(/X-Amz-SignedHeaders=content-length%3Bcontent-type%3Bhost/)
      const wrongType = yield* http(target.url, { method: "PUT", headers: { "content-type": "audio/mpeg" }, body: bytes(10) })
      expect(wrongType.status).toBe(403)
      expect(yield* store.stat(key)).toEqual(Option.none())
      const right = yield* http(target.url, { method: "PUT", headers: { ...target.headers }, body: bytes(10) })
      expect(right.status).toBe(200)
    }))

  it.effect("write switches to a multipart upload past one part and streams it back intact", () =>
    Effect.gen(function*() {
      const store = yield* BlobStore
      const server = yield* TestS3
      const key = "s3/large.bin"
      const chunk = bytes(256 * 1024, 4)
      const count = 48 // 12 MiB: parts of 5, 5 and 2 MiB
      const { sizeBytes } = yield* store.write(key, Stream.fromIterable(Array.from({ length: count }, () => chunk)), {
        contentType: "application/octet-stream"
      })
      expect(sizeBytes).toBe(chunk.byteLength * count)
      expect(yield* store.stat(key)).toEqual(Option.some({ sizeBytes }))
      expect(yield* Effect.promise(() => server.openUploads())).toEqual([])
      const hash = createHash("md5")
      let received = 0
      let pieces = 0
      yield* Stream.runForEach(store.read(key), (piece) =>
        Effect.sync(() => {
          received += piece.byteLength
          pieces++
          hash.update(piece)
        }))
      expect(received).toBe(sizeBytes)
      expect(pieces).toBeGreaterThan(1) // streamed, not gathered whole
      expect(hash.digest("hex")).toBe(md5(Array.from({ length: count }, () => chunk)))
      // A reader that stops early releases the response.
      const first = yield* Stream.runCollect(Stream.take(store.read(key), 1))
      expect(Chunk.size(first)).toBe(1)
      // An object whose size is an exact number of parts.
      const exact = yield* store.write("s3/exact.bin", Stream.make(bytes(PART_SIZE, 1), bytes(PART_SIZE, 2)), {
        contentType: "application/octet-stream"
      })
      expect(exact.sizeBytes).toBe(2 * PART_SIZE)
      expect(md5([yield* readAll("s3/exact.bin")])).toBe(md5([bytes(PART_SIZE, 1), bytes(PART_SIZE, 2)]))
    }))

  it.effect("move past singleCopyMaxBytes copies in UploadPartCopy ranges, server-side, and leaves no upload open", () =>
    Effect.gen(function*() {
      const store = yield* BlobStore
      const server = yield* TestS3
      const pieces = [bytes(PART_SIZE, 7), bytes(PART_SIZE, 8), bytes(2 * 1024 * 1024, 9)] // 12 MiB: ranges of 5, 5 and 2 MiB
      yield* store.write("s3/staging/large.bin", Stream.fromIterable(pieces), { contentType: "audio/wav" })
      expect(yield* store.move({ from: "s3/staging/large.bin", to: "s3/inputs/large.bin" })).toEqual({ sizeBytes: 12 * 1024 * 1024 })
      expect(md5([yield* readAll("s3/inputs/large.bin")])).toBe(md5(pieces))
      expect(yield* store.stat("s3/staging/large.bin")).toEqual(Option.none())
      expect(yield* Effect.promise(() => server.openUploads())).toEqual([])
      // a small one takes one CopyObject
      yield* store.write("s3/staging/small.bin", Stream.make(bytes(1000, 3)), { contentType: "audio/wav" })
      expect(yield* store.move({ from: "s3/staging/small.bin", to: "s3/inputs/small.bin" })).toEqual({ sizeBytes: 1000 })
      expect(md5([yield* readAll("s3/inputs/small.bin")])).toBe(md5([bytes(1000, 3)]))
    }))

  it.effect("a part URL signs its exact Content-Length: a larger part is refused with 403", () =>
    Effect.gen(function*() {
      const store = yield* BlobStore
      const key = "s3/exact-part.bin"
      const size = PART_SIZE + 10
      const target = yield* store.createUpload({ key, contentType: "audio/wav", sizeBytes: size, expiresAt: yield* inOneHour, partSize: PART_SIZE })
      if (target._tag !== "Multipart") throw new Error("expected multipart")
      for (const part of target.parts) expect(part.url).toMatch(/X-Amz-SignedHeaders=content-length%3Bhost/)
      expect((yield* http(target.parts[1]!.url, { method: "PUT", body: bytes(PART_SIZE, 1) })).status).toBe(403)
      expect((yield* http(target.parts[1]!.url, { method: "PUT", body: bytes(10, 1) })).status).toBe(200)
      yield* store.abortMultipart({ key, uploadId: target.uploadId })
    }))

  it.effect("a body that fails mid-write leaves no object and no open multipart upload", () =>
    Effect.gen(function*() {
      const store = yield* BlobStore
      const server = yield* TestS3
      const key = "s3/failed.bin"
      const body = Stream.concat(
        Stream.fromIterable(Array.from({ length: 24 }, () => bytes(256 * 1024, 6))), // 6 MiB: one part sent
        Stream.fail(new BlobError({ message: "the source broke" }))
      )
      const result = yield* Effect.either(store.write(key, body, { contentType: "audio/wav" }))
      expect(Either.isLeft(result) && result.left.message).toBe("the source broke")
      expect(yield* store.stat(key)).toEqual(Option.none())
      expect(yield* Effect.promise(() => server.openUploads())).toEqual([])
      // An empty body is an empty object.
      expect(yield* store.write("s3/empty.bin", Stream.empty, { contentType: "audio/wav" })).toEqual({ sizeBytes: 0 })
      expect(yield* store.stat("s3/empty.bin")).toEqual(Option.some({ sizeBytes: 0 }))
    }))

  it.effect("multipart parts under 5 MiB are refused up front; a single small part is fine", () =>
    Effect.gen(function*() {
      const store = yield* BlobStore
      const small = yield* Effect.either(store.createUpload({
        key: "s3/small-parts.wav",
        contentType: "audio/wav",
        sizeBytes: 3 * 1024 * 1024,
        expiresAt: yield* inOneHour,
        partSize: 1024 * 1024
      }))
      expect(Either.isLeft(small) && small.left.message).toMatch(/minimum part size/)
      const single = yield* store.createUpload({
        key: "s3/one-part.wav",
        contentType: "audio/wav",
        sizeBytes: 1000,
        expiresAt: yield* inOneHour,
        partSize: 1024 * 1024
      })
      expect(single._tag === "Multipart" && single.parts.length).toBe(1)
      if (single._tag === "Multipart") yield* store.abortMultipart({ key: "s3/one-part.wav", uploadId: single.uploadId })
    }))

  it.effect("wrong credentials: every operation fails with a BlobError that does not reveal the secret", () =>
    Effect.gen(function*() {
      const server = yield* TestS3
      const secret = "not-the-secret-0123456789"
      const failures = yield* Effect.gen(function*() {
        const store = yield* BlobStore
        const key = "s3/creds.wav"
        const outcomes: ReadonlyArray<Either.Either<unknown, BlobError>> = [
          yield* Effect.either(store.stat(key)),
          yield* Effect.either(readAll(key)),
          yield* Effect.either(store.write(key, Stream.make(bytes(10)), { contentType: "audio/wav" })),
          yield* Effect.either(store.delete(key)),
          yield* Effect.either(
            store.createUpload({ key, contentType: "audio/wav", sizeBytes: 10, expiresAt: yield* inOneHour, partSize: PART_SIZE })
          )
        ]
        // Signing needs no request: the URL is made, and the server refuses it.
        const target = asPut(yield* store.createUpload({ key, contentType: "audio/wav", sizeBytes: 10, expiresAt: yield* inOneHour }))
        expect(target.url).not.toContain(secret)
        expect((yield* http(target.url, { method: "PUT", headers: { ...target.headers }, body: bytes(10) })).status).toBe(403)
        return outcomes
      }).pipe(
        Effect.provide(layerS3BlobStore({
          ...server.options,
          credentials: { accessKeyId: "S3RVER", secretAccessKey: Redacted.make(secret) }
        }))
      )
      for (const outcome of failures) {
        expect(Either.isLeft(outcome)).toBe(true)
        if (Either.isLeft(outcome)) {
          expect(outcome.left).toBeInstanceOf(BlobError)
          expect(outcome.left.message).toMatch(/SignatureDoesNotMatch|HTTP 403/)
          expect(outcome.left.message).not.toContain(secret)
          expect(JSON.stringify(outcome.left)).not.toContain(secret)
        }
      }
    }))

  it.effect("an unreachable endpoint is a BlobError", () =>
    Effect.gen(function*() {
      const result = yield* Effect.either(
        Effect.flatMap(BlobStore, (store) => store.stat("s3/x.wav")).pipe(
          Effect.provide(layerS3BlobStore({
            bucket: "nowhere",
            endpoint: "http://127.0.0.1:1",
            region: "us-east-1",
            forcePathStyle: true,
            credentials: { accessKeyId: "a", secretAccessKey: "b" }
          }))
        )
      )
      expect(Either.isLeft(result) && result.left._tag).toBe("BlobError")
      expect(Either.isLeft(result) && result.left.message).toMatch(/^stat s3:\/\/nowhere\/s3\/x\.wav: /)
    }))
})

describe("S3 store helpers", () => {
  it("presignWindow: seconds up to expiresAt, capped at 7 days; a past instant gives an expired URL", () => {
    const now = Date.UTC(2026, 0, 1, 12, 0, 0, 400)
    expect(presignWindow(now + 6 * 3_600_000, now)).toEqual({
      expiresIn: 6 * 3600,
      signingDate: new Date(Date.UTC(2026, 0, 1, 12, 0, 0))
    })
    expect(presignWindow(now + 30 * 24 * 3_600_000, now).expiresIn).toBe(MAX_PRESIGN_SECONDS)
    const past = presignWindow(now - 60_000, now)
    expect(past.signingDate.getTime() + past.expiresIn * 1000).toBeLessThanOrEqual(now - 60_000)
    expect(past.expiresIn).toBe(1)
  })

  it("normalizeEtag", () => {
    expect(normalizeEtag("\"abc\"")).toBe("\"abc\"")
    expect(normalizeEtag("abc")).toBe("\"abc\"")
    expect(normalizeEtag("W/\"abc\"")).toBe("\"abc\"")
    expect(normalizeEtag("")).toBeUndefined()
    expect(normalizeEtag("a\"b")).toBeUndefined()
  })

  const fromEnv = (env: Record<string, string>) =>
    Effect.runSyncExit(Effect.withConfigProvider(S3Config, ConfigProvider.fromMap(new Map(Object.entries(env)))))

  it("S3Config: defaults, path style, static credentials both or neither", () => {
    const minimal = fromEnv({ S3_BUCKET: "b" })
    expect(minimal).toMatchObject({
      _tag: "Success",
      value: { bucket: "b", region: "us-east-1", forcePathStyle: false, endpoint: undefined, credentials: undefined }
    })
    const full = fromEnv({
      S3_BUCKET: "b",
      S3_ENDPOINT: "http://127.0.0.1:9000",
      S3_REGION: "garage",
      S3_FORCE_PATH_STYLE: "true",
      S3_ACCESS_KEY_ID: "id",
      S3_SECRET_ACCESS_KEY: "secret"
    })
    expect(full._tag).toBe("Success")
    if (full._tag === "Success") {
      expect(full.value).toMatchObject({ endpoint: "http://127.0.0.1:9000", region: "garage", forcePathStyle: true })
      expect(full.value.credentials?.accessKeyId).toBe("id")
      expect(String(full.value.credentials?.secretAccessKey)).not.toContain("secret")
    }
    expect(fromEnv({})._tag).toBe("Failure")
    expect(fromEnv({ S3_BUCKET: "b", S3_ACCESS_KEY_ID: "id" })._tag).toBe("Failure")
    expect(fromEnv({ S3_BUCKET: "b", S3_ENDPOINT: "not a url" })._tag).toBe("Failure")
    expect(fromEnv({ S3_BUCKET: "b", S3_FORCE_PATH_STYLE: "maybe" })._tag).toBe("Failure")
  })
})
