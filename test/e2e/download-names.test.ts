/**
 * The output's download name comes from the client's filename: whatever it holds (control
 * characters, a header injection attempt, bidirectional overrides, unpaired surrogates, 1,024
 * characters), `GET /v1/jobs/{id}/output` answers 200 with a safe name and a link that
 * downloads, never a 500 after the job was charged (issue 9, docs/security.md).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../support/server.js"
import { call, denoise, readyFile, tone, waitForJob } from "./helpers.js"

let server: TestServer
beforeAll(async () => {
  server = await startTestServer({ worker: true, workerOptions: { pollInterval: "100 millis" } })
})
afterAll(() => server?.close())

/** A job on a file named `filename`, run to success; its output link. */
const outputOf = async (key: string, filename: string) => {
  const file = await readyFile(server, key, tone(1), { filename })
  const job = await denoise(server, key, { file })
  expect(job.status, job.text).toBe(202)
  const done = await waitForJob(server, key, job.json.id)
  expect(done.json.status, done.text).toBe("succeeded")
  const link = await call(server, "GET", `/v1/jobs/${job.json.id}/output`, { key })
  return { job: done.json, link }
}

/** A name that is safe to sign and to send back in a header. */
const expectSafe = async (link: { status: number; json: any; text: string }, expected?: string) => {
  expect(link.status, link.text).toBe(200)
  const name: string = link.json.filename
  if (expected !== undefined) expect(name).toBe(expected)
  // eslint-disable-next-line no-control-regex
  expect(name).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/)
  expect(name).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/) // no unpaired surrogate
  expect(Array.from(name).length).toBeLessThanOrEqual(200 + ".denoised.mp3".length)
  expect(name).toMatch(/\.denoised\.mp3$/)
  const download = await fetch(link.json.url)
  expect(download.status).toBe(200)
  expect(download.headers.get("content-disposition")).toMatch(/^attachment; filename="[\x20-\x7e]+"; filename\*=UTF-8''/)
  await download.arrayBuffer()
}

describe("download names from hostile filenames", () => {
  it("a live job whose filename carries DEL, C1 controls and a header attempt: charged once, its output downloads", async () => {
    const { liveKey } = await server.createAccount(10_000_000)
    const { job, link } = await outputOf(liveKey, "take\u007f\u009b[2J\u0085X-Evil: 1.wav")
    expect(job.cost.charged_micros).toBe(1_000)
    await expectSafe(link, "take__[2J_X-Evil: 1.denoised.mp3")
  }, 60_000)

  it("C0 control characters (NUL, ESC, CR, LF) are refused when the file is created: 422 naming the field", async () => {
    const { liveKey } = await server.createAccount(10_000_000)
    for (const filename of ["take\u0000.wav", "take\u001b[2J.wav", "take\r\nX-Evil: 1.wav", "\u0001\u0002"]) {
      const created = await call(server, "POST", "/v1/files", { key: liveKey, body: { filename, size_bytes: 1_000, content_type: "audio/wav" } })
      expect(created.status, created.text).toBe(422)
      expect(created.json).toMatchObject({ code: "invalid_request", field: "filename" })
    }
  }, 60_000)

  it.each([
    ["1,024 characters", "x".repeat(1_020) + ".wav", "x".repeat(200) + ".denoised.mp3"],
    ["an unpaired surrogate", "voice\ud800.wav", "voice\ufffd.denoised.mp3"],
    ["a right-to-left override", "\u202egnp.wav", "_gnp.denoised.mp3"],
    ["a path", "../../etc/passwd", "passwd.denoised.mp3"],
    ["only C1 control characters", "\u0081\u0082", "__.denoised.mp3"],
    ["only spaces", "   .wav", "audio.denoised.mp3"]
  ])("a test-mode job on a file named with %s", async (_, filename, expected) => {
    const { testKey } = await server.createAccount()
    const { link } = await outputOf(testKey, filename)
    await expectSafe(link, expected)
  }, 60_000)
})
