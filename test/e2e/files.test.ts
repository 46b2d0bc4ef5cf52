/**
 * The file endpoints: POST /v1/files (PUT or multipart targets, size limits), GET, DELETE,
 * POST …/complete (size check, parts, validation outcome).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../support/server.js"
import {
  call, complete, createFile, expectFileShape, expectIso, expectProblem, getFile, junk, putUpload, readyFile, tone,
  uploadFile, waitForFile
} from "./helpers.js"

const MiB = 1024 * 1024
const PART = 67_108_864

describe("files", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer()
  })
  afterAll(async () => {
    await server.close()
  })

  it("gives a PUT upload up to 100 MiB and multipart above, in 64 MiB parts", async () => {
    const { liveKey } = await server.createAccount()
    const put = await createFile(server, liveKey, { size_bytes: 100 * MiB })
    expect(put.status).toBe(201)
    expect(put.json.upload.method).toBe("PUT")

    for (const [size, parts] of [[100 * MiB + 1, 2], [3 * PART, 3], [3 * PART + 1, 4], [5 * 1024 * MiB, 80]] as const) {
      const created = await createFile(server, liveKey, { filename: "long.flac", size_bytes: size, content_type: "audio/flac" })
      expect(created.status, created.text).toBe(201)
      expect(created.json.status).toBe("uploading")
      const upload = created.json.upload
      expect(Object.keys(upload).sort()).toEqual(["expires_at", "method", "part_size", "parts"])
      expect(upload.method).toBe("multipart")
      expect(upload.part_size).toBe(PART)
      expect(upload.parts).toHaveLength(parts)
      expect(upload.parts.map((p: any) => p.part_number)).toEqual(Array.from({ length: parts }, (_, i) => i + 1))
      for (const part of upload.parts) {
        expect(Object.keys(part).sort()).toEqual(["part_number", "url"])
        expect(part.url).toMatch(new RegExp(`^${server.baseUrl}/`))
      }
      expect(new Set(upload.parts.map((p: any) => p.url)).size).toBe(parts)
      expectIso(upload.expires_at)
      await call(server, "DELETE", `/v1/files/${created.json.id}`, { key: liveKey })
    }
  })

  it("accepts the size limits exactly and refuses one byte more (413 file_too_large)", async () => {
    const { liveKey, testKey } = await server.createAccount()
    expect((await createFile(server, testKey, { size_bytes: 26_214_400 })).status).toBe(201)
    await expectProblem(server, await createFile(server, testKey, { size_bytes: 26_214_401 }), 413, "file_too_large")
    expect((await createFile(server, liveKey, { size_bytes: 5_368_709_120 })).status).toBe(201)
    await expectProblem(server, await createFile(server, liveKey, { size_bytes: 5_368_709_121 }), 413, "file_too_large")
  })

  it("accepts audio and audio-in-video types, parameters ignored; refuses others with 415", async () => {
    const { liveKey } = await server.createAccount()
    for (const type of ["audio/mpeg", "audio/mp4", "audio/ogg; codecs=opus", "video/mp4", "video/webm", "application/ogg"]) {
      const created = await createFile(server, liveKey, { size_bytes: 10, content_type: type })
      expect(created.status, type).toBe(201)
      expect((await call(server, "DELETE", `/v1/files/${created.json.id}`, { key: liveKey })).status).toBe(204)
    }
    for (const type of ["text/plain", "application/json", "image/png", "video/x-msvideo", "audio"]) {
      const refused = await createFile(server, liveKey, { size_bytes: 10, content_type: type })
      await expectProblem(server, refused, 415, "unsupported_media_type")
    }
  })

  it("reads a file (200) and deletes it (204, empty), after which it is gone", async () => {
    const { testKey } = await server.createAccount()
    const id = await readyFile(server, testKey)
    const got = await getFile(server, testKey, id)
    expect(got.status).toBe(200)
    expectFileShape(got.json)
    const deleted = await call(server, "DELETE", `/v1/files/${id}`, { key: testKey })
    expect(deleted.status).toBe(204)
    expect(deleted.text).toBe("")
    await expectProblem(server, await getFile(server, testKey, id), 404, "not_found")
    await expectProblem(server, await call(server, "DELETE", `/v1/files/${id}`, { key: testKey }), 404, "not_found")
  })

  it("refuses complete while the bytes are missing or of another size (422), leaving the file uploading", async () => {
    const { testKey } = await server.createAccount()
    const audio = tone(1)
    const created = await createFile(server, testKey, { size_bytes: audio.length })
    const missing = await expectProblem(server, await complete(server, testKey, created.json.id), 422, "invalid_request")
    expect(missing.detail).toContain("size_bytes")
    expect((await getFile(server, testKey, created.json.id)).json.status).toBe("uploading")
    // the signed PUT fixes the length: a shorter body is refused by storage
    const short = await fetch(created.json.upload.url, { method: "PUT", headers: created.json.upload.headers, body: audio.slice(1) })
    expect(short.status).toBe(400)
    await expectProblem(server, await complete(server, testKey, created.json.id), 422, "invalid_request")
    // …and the right bytes then complete
    expect((await putUpload(created.json.upload, audio)).status).toBe(200)
    const completed = await complete(server, testKey, created.json.id, null)
    expect(completed.status).toBe(202)
    expect(completed.json.status).toBe("validating")
    // a second complete answers the file as it is
    const ready = await waitForFile(server, testKey, created.json.id)
    const again = await complete(server, testKey, created.json.id)
    expect(again.status).toBe(202)
    expect(again.json.status).toBe(ready.json.status)
  })

  it("rejects an upload that does not decode, with error.code invalid_audio", async () => {
    const { testKey } = await server.createAccount()
    const text = new TextEncoder().encode("this is not audio at all, just a text file\n".repeat(20))
    const fromText = await uploadFile(server, testKey, text, { filename: "notes.wav", content_type: "audio/wav" })
    const fromJunk = await uploadFile(server, testKey, junk(4096), { filename: "noise.mp3", content_type: "audio/mpeg" })
    for (const id of [fromText, fromJunk]) {
      const file = await waitForFile(server, testKey, id)
      expectFileShape(file.json)
      expect(file.json.status).toBe("rejected")
      expect(file.json.error.code).toBe("invalid_audio")
      expect(file.json.error.message.length).toBeGreaterThan(0)
      expect(file.json.duration_seconds).toBeNull()
      expect(file.json.ready_at).toBeNull()
      // rejected files expire 24 hours after rejection
      expectIso(file.json.expires_at)
    }
  })

  it("reads an MP3 upload's decoded duration", async () => {
    const { testKey } = await server.createAccount()
    const id = await readyFile(server, testKey, tone(3, "mp3"), { filename: "talk.mp3", content_type: "audio/mpeg" })
    const file = await getFile(server, testKey, id)
    expect(file.json.duration_seconds).toBeGreaterThan(2.9)
    expect(file.json.duration_seconds).toBeLessThan(3.2)
  })

  it("lets a files:write or a jobs:read key read files", async () => {
    const account = await server.createAccount()
    const id = (await createFile(server, account.liveKey, { size_bytes: 100 })).json.id
    const { createKey } = await import("../../core/services/accounts.js")
    const reader = await server.run(createKey(account.account.id, { mode: "live", scopes: ["jobs:read"] }))
    expect((await getFile(server, reader.key, id)).status).toBe(200)
    const writer = await server.run(createKey(account.account.id, { mode: "live", scopes: ["files:write"] }))
    expect((await getFile(server, writer.key, id)).status).toBe(200)
    const payer = await server.run(createKey(account.account.id, { mode: "live", scopes: ["credits:read", "jobs:write"] }))
    const refused = await expectProblem(server, await getFile(server, payer.key, id), 403, "insufficient_scope")
    expect(refused.detail).toMatch(/files:write|jobs:read/)
  })
})

describe("files: multipart upload end to end (small parts)", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ limits: { putMaxBytes: 1_000, multipartPartBytes: 8_192 } })
  })
  afterAll(async () => {
    await server.close()
  })

  it("uploads each part, completes with the etags and validates the assembled audio", async () => {
    const { liveKey } = await server.createAccount()
    const audio = tone(2) // 8 kHz 16-bit mono: ~32 KB, 4 parts
    const created = await createFile(server, liveKey, { size_bytes: audio.length })
    const upload = created.json.upload
    expect(upload.method).toBe("multipart")
    expect(upload.part_size).toBe(8_192)
    expect(upload.parts).toHaveLength(Math.ceil(audio.length / 8_192))

    const noParts = await expectProblem(server, await complete(server, liveKey, created.json.id), 422, "invalid_request")
    expect(noParts.detail).toContain("parts")

    const etags: Array<{ part_number: number; etag: string }> = []
    for (const part of upload.parts) {
      const start = (part.part_number - 1) * upload.part_size
      const response = await fetch(part.url, { method: "PUT", body: audio.slice(start, start + upload.part_size) })
      expect(response.status).toBe(200)
      etags.push({ part_number: part.part_number, etag: response.headers.get("etag")! })
    }
    const partial = await complete(server, liveKey, created.json.id, { parts: etags.slice(1) })
    await expectProblem(server, partial, 422, "invalid_request")
    const completed = await complete(server, liveKey, created.json.id, { parts: etags })
    expect(completed.status, completed.text).toBe(202)
    const ready = await waitForFile(server, liveKey, created.json.id)
    expect(ready.json.status).toBe("ready")
    expect(ready.json.duration_seconds).toBeCloseTo(2, 1)
  })
})
