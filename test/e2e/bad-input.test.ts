/**
 * Bad input leaves no partial state: refused creates make no file, refused jobs hold nothing,
 * uploads that are not audio are rejected, odd names and ids are answered cleanly, and the
 * server keeps answering through all of it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createKey } from "../../core/services/accounts.js"
import { startTestServer, type TestServer } from "../support/server.js"
import {
  call, createFile, credits, denoise, expectProblem, getFile, junk, readyFile, silentVideo, tone, uploadFile, waitForFile,
  waitForJob
} from "./helpers.js"

describe("bad input", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer()
  })
  afterAll(async () => {
    await server.close()
  })

  it("makes no file of a refused POST /v1/files (the open-upload count is unchanged)", async () => {
    const account = await server.createAccount()
    for (let i = 0; i < 9; i++) expect((await createFile(server, account.testKey, { size_bytes: 10 })).status).toBe(201)
    const readOnly = (await server.run(createKey(account.account.id, { mode: "test", scopes: ["jobs:read"] }))).key
    const json = { "content-type": "application/json" }
    const refusals: Array<[Promise<any>, number]> = [
      [createFile(server, account.testKey, { size_bytes: 10, content_type: "text/plain" }), 415],
      [createFile(server, account.testKey, { size_bytes: 26_214_401 }), 413],
      [call(server, "POST", "/v1/files", { key: account.testKey, body: { filename: "a.wav", size_bytes: -1, content_type: "audio/wav" } }), 422],
      [call(server, "POST", "/v1/files", { key: account.testKey, body: { filename: "a.wav", size_bytes: 10, content_type: "audio/wav", x: 1 } }), 422],
      [call(server, "POST", "/v1/files", { key: account.testKey, body: { filename: { name: "a.wav" }, size_bytes: 10, content_type: "audio/wav" } }), 422],
      [call(server, "POST", "/v1/files", { key: account.testKey, body: { filename: "a.wav", size_bytes: 1e300, content_type: "audio/wav" } }), 422],
      [call(server, "POST", "/v1/files", { key: account.testKey, raw: "{\"filename\":\"a.wav\",\"size_bytes\":10,", headers: json }), 400],
      [call(server, "POST", "/v1/files", { key: account.testKey, raw: "[]", headers: json }), 400],
      [call(server, "POST", "/v1/files", { key: account.testKey, raw: "{\"filename\":\"a.wav\",\"size_bytes\":10,\"content_type\":\"audio/wav\"}", headers: { "content-type": "text/plain" } }), 415],
      [createFile(server, readOnly, { size_bytes: 10 }), 403],
      [createFile(server, `${account.testKey}x`, { size_bytes: 10 }), 401]
    ]
    for (const [reply, status] of refusals) expect((await reply).status).toBe(status)
    // exactly one place was left
    expect((await createFile(server, account.testKey, { size_bytes: 10 })).status).toBe(201)
    await expectProblem(server, await createFile(server, account.testKey, { size_bytes: 10 }), 429, "quota_exceeded")
  })

  it("creates no job and holds nothing for a refused POST /v1/audio/denoise", async () => {
    const account = await server.createAccount(999)
    const ready = await readyFile(server, account.liveKey)
    const uploading = (await createFile(server, account.liveKey, { size_bytes: 10 })).json.id
    const before = await credits(server, account.liveKey)
    const refusals: Array<[unknown, number]> = [
      [{ file: ready }, 402],
      [{ file: ready, model: "acme/none" }, 422],
      [{ file: uploading }, 409],
      [{ file: "file_nope" }, 404],
      [{ file: ready, model: 7 }, 422],
      [{ file: ready, extra: true }, 422],
      [{}, 422]
    ]
    for (const [body, status] of refusals) expect((await denoise(server, account.liveKey, body)).status).toBe(status)
    expect(await credits(server, account.liveKey)).toEqual(before)
    expect((await call(server, "GET", "/v1/jobs", { key: account.liveKey })).json).toEqual({ data: [], next_cursor: null })
    // the file is free to delete: no job took it
    expect((await call(server, "DELETE", `/v1/files/${ready}`, { key: account.liveKey })).status).toBe(204)
  })

  it("rejects uploads that are not audio: text, random bytes, a single byte, a video without sound", async () => {
    const { testKey } = await server.createAccount()
    const uploads: Array<[Uint8Array, string]> = [
      [new TextEncoder().encode("RIFF....WAVEfmt but not really\n".repeat(30)), "audio/wav"],
      [junk(8192, 99), "audio/flac"],
      [new Uint8Array([0x42]), "audio/mpeg"],
      [silentVideo(), "video/mp4"],
      // a real WAV cut in its header
      [tone(1).slice(0, 30), "audio/wav"]
    ]
    const ids = []
    for (const [bytes, type] of uploads) ids.push(await uploadFile(server, testKey, bytes, { content_type: type }))
    for (const id of ids) {
      const file = await waitForFile(server, testKey, id)
      expect(file.json.status, id).toBe("rejected")
      expect(file.json.error.code).toBe("invalid_audio")
      await expectProblem(server, await denoise(server, testKey, { file: id }), 409, "file_not_ready")
      // a rejected file never becomes ready: completing again answers it as it is
      const again = await call(server, "POST", `/v1/files/${id}/complete`, { key: testKey })
      expect(again.json.status).toBe("rejected")
    }
    expect((await waitForFile(server, testKey, ids[3]!)).json.error.message).toMatch(/audio/)
  })

  it("reads an M4A whose index is at the end", async () => {
    const { testKey } = await server.createAccount()
    const id = await readyFile(server, testKey, tone(2, "m4a"), { filename: "memo.m4a", content_type: "audio/mp4" })
    const file = await getFile(server, testKey, id)
    expect(file.json.duration_seconds).toBeGreaterThan(1.9)
    expect(file.json.duration_seconds).toBeLessThan(2.2)
  })

  it("answers odd ids and names cleanly", async () => {
    const { testKey } = await server.createAccount()
    for (const id of ["%20", "..%2F..%2Fetc", "file_" + "z".repeat(500), "%E2%98%83", "job_x%00"]) {
      await expectProblem(server, await call(server, "GET", `/v1/files/${id}`, { key: testKey }), 404, "not_found")
      await expectProblem(server, await call(server, "GET", `/v1/jobs/${id}`, { key: testKey }), 404, "not_found")
    }
    // a name with folders, dots, quotes and non-ASCII gives a clean download name
    const name = "rec/2024/Café \"live\".take.2.wav"
    const fileId = await readyFile(server, testKey, tone(1), { filename: name })
    expect((await getFile(server, testKey, fileId)).json.filename).toBe(name)
    const job = await denoise(server, testKey, { file: fileId })
    await waitForJob(server, testKey, job.json.id)
    const link = await call(server, "GET", `/v1/jobs/${job.json.id}/output`, { key: testKey })
    expect(link.json.filename).toBe("Café \"live\".take.2.denoised.mp3")
    const download = await fetch(link.json.url)
    expect(download.status).toBe(200)
    const disposition = download.headers.get("content-disposition")!
    expect(disposition).toMatch(/^attachment; /)
    expect(disposition).toContain("filename*=UTF-8''Caf%C3%A9%20%22live%22.take.2.denoised.mp3")
    await download.arrayBuffer()
  })

  it("still answers health after all of it", async () => {
    const health = await call(server, "GET", "/v1/health")
    expect(health.status).toBe(200)
    expect(health.json).toEqual({ status: "ok", version: "1.0.0", env: "test" })
    expect((await call(server, "GET", "/v1/status")).json.status).toBe("ok")
  })
})
