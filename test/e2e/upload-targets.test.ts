/**
 * The input that was priced is the input that is processed (issue 9, decisions.md "Files"):
 * upload URLs write a staging object that only `complete` reads; complete moves it to the
 * input, where no URL reaches. Over real HTTP, on local disk and on S3 (s3rver):
 *  - the same URL PUT again after `ready` with other bytes of the same size (a 1-second WAV,
 *    then a 24-second one): refused on local disk (403); on S3 the bytes land in staging and
 *    the live job's output and charge still follow the validated 1-second file;
 *  - PUT after `DELETE`: refused on local disk; on S3 swept, so no object outlives its record;
 *  - a multipart part longer than its share: refused, and complete assembles exactly size_bytes.
 */
import { readdirSync } from "node:fs"
import { join } from "node:path"
import { Effect, Exit, Option, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { BlobStore } from "../../core/ports/blob-store.js"
import { inputKeyOf, stagingKeyOf } from "../../core/rules/storage.js"
import { sweepLifecycle } from "../../core/services/lifecycle.js"
import { type RunningS3rver, startS3rver } from "../support/s3rver.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { call, complete, createFile, credits, denoise, ffprobeDuration, putUpload, waitForFile, waitForJob } from "./helpers.js"

/** A PCM WAV (44-byte header) of `frames` frames of a 440 Hz tone. */
const wav = (options: { readonly rate: number; readonly channels: number; readonly bits: 8 | 16; readonly frames: number }) => {
  const { rate, channels, bits, frames } = options
  const blockAlign = channels * (bits / 8)
  const dataBytes = frames * blockAlign
  const out = Buffer.alloc(44 + dataBytes)
  out.write("RIFF", 0, "latin1")
  out.writeUInt32LE(36 + dataBytes, 4)
  out.write("WAVEfmt ", 8, "latin1")
  out.writeUInt32LE(16, 16)
  out.writeUInt16LE(1, 20)
  out.writeUInt16LE(channels, 22)
  out.writeUInt32LE(rate, 24)
  out.writeUInt32LE(rate * blockAlign, 28)
  out.writeUInt16LE(blockAlign, 32)
  out.writeUInt16LE(bits, 34)
  out.write("data", 36, "latin1")
  out.writeUInt32LE(dataBytes, 40)
  for (let frame = 0; frame < frames; frame++) {
    const value = Math.sin((2 * Math.PI * 440 * frame) / rate) * 0.3
    for (let c = 0; c < channels; c++) {
      const at = 44 + frame * blockAlign + c * (bits / 8)
      if (bits === 16) out.writeInt16LE(Math.round(value * 32767), at)
      else out.writeUInt8(Math.round(128 + value * 127), at)
    }
  }
  return new Uint8Array(out)
}

/** 1 second at 48 kHz stereo 16-bit, and 24 seconds at 8 kHz mono 8-bit: 192,044 bytes each. */
const ONE_SECOND = wav({ rate: 48_000, channels: 2, bits: 16, frames: 48_000 })
const TWENTY_FOUR_SECONDS = wav({ rate: 8_000, channels: 1, bits: 8, frames: 24 * 8_000 })
/** RNNoise's minimum: 10 billable seconds at 100 micros. */
const ONE_SECOND_COST = 1_000
const CREDIT = 10_000_000

/** create → PUT → complete → ready; returns the file id and its upload target. */
const readyUpload = async (server: TestServer, key: string, bytes: Uint8Array) => {
  const created = await createFile(server, key, { size_bytes: bytes.length })
  expect(created.status, created.text).toBe(201)
  const put = await putUpload(created.json.upload, bytes)
  expect(put.status).toBe(200)
  await put.arrayBuffer()
  expect((await complete(server, key, created.json.id)).status).toBe(202)
  const ready = await waitForFile(server, key, created.json.id)
  expect(ready.json).toMatchObject({ status: "ready", duration_seconds: 1 })
  return { id: created.json.id as string, upload: created.json.upload as { url: string; headers: Record<string, string> } }
}

/** A live job on the file, run to its end; its output's decoded duration and the account's charge. */
const liveJobOn = async (server: TestServer, liveKey: string, fileId: string) => {
  const created = await denoise(server, liveKey, { file: fileId })
  expect(created.status, created.text).toBe(202)
  expect(created.json.cost.estimated_micros).toBe(ONE_SECOND_COST)
  const done = await waitForJob(server, liveKey, created.json.id)
  expect(done.json.status, done.text).toBe("succeeded")
  const link = await call(server, "GET", `/v1/jobs/${created.json.id}/output`, { key: liveKey })
  expect(link.status).toBe(200)
  const mp3 = new Uint8Array(await (await fetch(link.json.url)).arrayBuffer())
  return { job: done.json, outputSeconds: ffprobeDuration(mp3, "output.mp3").duration }
}

const stored = (server: TestServer, key: string) =>
  server.run(Effect.flatMap(BlobStore, (blobs) => blobs.stat(key))).then(Option.isSome)

describe("local disk: upload URLs work only while the file is uploading", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ worker: true, workerOptions: { pollInterval: "100 millis" } })
  })
  afterAll(() => server?.close())

  it("PUT again after ready is 403; the live job is priced and processed on the validated 1-second file", async () => {
    const account = await server.createAccount(CREDIT)
    const { id, upload } = await readyUpload(server, account.liveKey, ONE_SECOND)
    const late = await putUpload(upload, TWENTY_FOUR_SECONDS)
    expect(late.status).toBe(403)
    expect(((await late.json()) as { code: string }).code).toBe("forbidden")
    const { job, outputSeconds } = await liveJobOn(server, account.liveKey, id)
    expect(job.cost.charged_micros).toBe(ONE_SECOND_COST)
    expect(job.input.duration_seconds).toBe(1)
    expect(outputSeconds).toBeLessThan(2)
    expect((await credits(server, account.liveKey)).balance_micros).toBe(CREDIT - ONE_SECOND_COST)
  }, 90_000)

  it("PUT after DELETE is 403 and leaves no bytes on disk", async () => {
    const account = await server.createAccount()
    for (const completeFirst of [false, true]) {
      const created = await createFile(server, account.testKey, { size_bytes: ONE_SECOND.length })
      const id = created.json.id as string
      await (await putUpload(created.json.upload, ONE_SECOND)).arrayBuffer()
      if (completeFirst) await waitForFile(server, account.testKey, (await complete(server, account.testKey, id)).json.id)
      expect((await call(server, "DELETE", `/v1/files/${id}`, { key: account.testKey })).status).toBe(204)
      const late = await putUpload(created.json.upload, ONE_SECOND)
      expect(late.status).toBe(403)
      await late.arrayBuffer()
      expect(await stored(server, stagingKeyOf(id))).toBe(false)
      expect(await stored(server, inputKeyOf(id))).toBe(false)
      const objects = join(server.dataDir, "blobs", "objects")
      const everything = readdirSync(objects, { recursive: true }).map(String)
      expect(everything.filter((path) => path.includes(id))).toEqual([])
    }
  }, 60_000)
})

describe("S3: bytes sent after complete or delete are never read, and swept", () => {
  const scope = Effect.runSync(Scope.make())
  let s3: RunningS3rver
  let server: TestServer
  beforeAll(async () => {
    s3 = await Effect.runPromise(Scope.extend(startS3rver(), scope))
    server = await startTestServer({
      s3: s3.options,
      worker: true,
      workerOptions: { pollInterval: "100 millis" },
      // multipart from 5 MiB on, in S3's smallest parts
      limits: { putMaxBytes: 5 * 1024 * 1024, multipartPartBytes: 5 * 1024 * 1024 }
    })
  }, 60_000)
  afterAll(async () => {
    await server?.close()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  it("PUT again after ready lands in staging: the live job's output and charge follow the validated file; the sweep removes it", async () => {
    const account = await server.createAccount(CREDIT)
    const { id, upload } = await readyUpload(server, account.liveKey, ONE_SECOND)
    const late = await putUpload(upload, TWENTY_FOUR_SECONDS)
    expect(late.status).toBe(200) // S3 cannot refuse a signed PUT before it expires
    await late.arrayBuffer()
    expect(await stored(server, stagingKeyOf(id))).toBe(true)
    const { job, outputSeconds } = await liveJobOn(server, account.liveKey, id)
    expect(job.cost.charged_micros).toBe(ONE_SECOND_COST)
    expect(outputSeconds).toBeLessThan(2)
    expect((await credits(server, account.liveKey)).balance_micros).toBe(CREDIT - ONE_SECOND_COST)
    const swept = await server.run(sweepLifecycle)
    expect(swept.sweptStaging).toBe(1)
    expect(await stored(server, stagingKeyOf(id))).toBe(false)
    expect(await stored(server, inputKeyOf(id))).toBe(true)
  }, 90_000)

  it("the dashboard's CSP admits the origin of the bucket's signed URLs for uploads and players", async () => {
    const account = await server.createAccount()
    const created = await createFile(server, account.testKey, { size_bytes: ONE_SECOND.length })
    const origin = new URL(created.json.upload.url).origin
    expect(origin).not.toBe(new URL(server.baseUrl).origin)
    const csp = (await fetch(`${server.baseUrl}/dashboard/new`)).headers.get("content-security-policy")!
    for (const directive of ["connect-src", "media-src"]) {
      expect(csp.split("; ").find((d) => d.startsWith(directive))!.split(" ")).toContain(origin)
    }
  })

  it("PUT after DELETE: the bytes land in staging and the sweep removes them; nothing of the file is left", async () => {
    const account = await server.createAccount()
    const created = await createFile(server, account.testKey, { size_bytes: ONE_SECOND.length })
    const id = created.json.id as string
    await (await putUpload(created.json.upload, ONE_SECOND)).arrayBuffer()
    expect((await call(server, "DELETE", `/v1/files/${id}`, { key: account.testKey })).status).toBe(204)
    expect(await stored(server, stagingKeyOf(id))).toBe(false)
    await (await putUpload(created.json.upload, ONE_SECOND)).arrayBuffer()
    expect(await stored(server, stagingKeyOf(id))).toBe(true)
    expect((await server.run(sweepLifecycle)).sweptStaging).toBe(1)
    expect(await stored(server, stagingKeyOf(id))).toBe(false)
    expect(await stored(server, inputKeyOf(id))).toBe(false)
  }, 60_000)

  it("a part longer than its share is refused (403); complete assembles exactly size_bytes", async () => {
    const account = await server.createAccount()
    const partSize = 5 * 1024 * 1024
    const frames = (partSize + 1_000 - 44) / 2 // 8 kHz mono 16-bit: a WAV of 5 MiB + 1,000 bytes
    const bytes = wav({ rate: 8_000, channels: 1, bits: 16, frames })
    expect(bytes.length).toBe(partSize + 1_000)
    const created = await createFile(server, account.testKey, { size_bytes: bytes.length })
    expect(created.status, created.text).toBe(201)
    expect(created.json.upload).toMatchObject({ method: "multipart", part_size: partSize })
    const [first, second] = created.json.upload.parts as Array<{ part_number: number; url: string }>
    const put = (url: string, body: Uint8Array) => fetch(url, { method: "PUT", body }).then(async (r) => (await r.arrayBuffer(), r))
    // the last part's share is 1,000 bytes: a whole part's worth is refused, as is one byte more in part 1
    expect((await put(second!.url, bytes.subarray(0, partSize))).status).toBe(403)
    expect((await put(first!.url, bytes.subarray(0, partSize + 1))).status).toBe(403)
    const parts = []
    for (const [part, body] of [[first!, bytes.subarray(0, partSize)], [second!, bytes.subarray(partSize)]] as const) {
      const reply = await put(part.url, body)
      expect(reply.status).toBe(200)
      parts.push({ part_number: part.part_number, etag: reply.headers.get("etag") })
    }
    expect((await complete(server, account.testKey, created.json.id, { parts })).status).toBe(202)
    const size = await server.run(Effect.flatMap(BlobStore, (blobs) => blobs.stat(inputKeyOf(created.json.id))))
    expect(size).toEqual(Option.some({ sizeBytes: bytes.length }))
    const ready = await waitForFile(server, account.testKey, created.json.id)
    expect(ready.json.status).toBe("ready")
    expect(ready.json.duration_seconds).toBeCloseTo(frames / 8_000, 2)
  }, 60_000)
})
