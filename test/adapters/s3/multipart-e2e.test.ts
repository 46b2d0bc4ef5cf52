/**
 * The multipart path end to end on the S3 blob store, at full size: a 200 MiB WAV goes through
 * POST /v1/files (4 parts of 64 MiB, decisions.md "Files"), each part PUT with plain `fetch` to
 * its presigned URL, complete with the parts' ETags, then validation decodes all of it from S3
 * and the file is `ready` with the WAV's duration. The API runs as its own OS process
 * (`npm start`'s entry) against `@20minutes/s3rver` in this process, and its resident memory is
 * sampled throughout: it must stay flat, i.e. no part nor the whole file is ever held in memory
 * by the API (the bytes travel client → S3 directly, and S3 → ffmpeg as a stream).
 */
import { GetObjectCommand, HeadObjectCommand, S3Client } from "@aws-sdk/client-s3"
import { Effect, Exit, Scope } from "effect"
import { execFile } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { open, stat } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Readable } from "node:stream"
import { promisify } from "node:util"
import { afterAll, describe, expect, it } from "vitest"
import { call, complete, createFile, pollUntil } from "../../e2e/helpers.js"
import { entryPid, type HushProcess, residentMemory, resetPeakMemory, runCli, startProcess, waitForHealth } from "../../support/process.js"
import { type RunningS3rver, S3RVER_CREDENTIALS, startS3rver } from "../../support/s3rver.js"
import { freePort, type TestServer } from "../../support/server.js"

const MiB = 1024 * 1024
const PART_SIZE = 64 * MiB
/** 48 kHz stereo s16 WAV with ffmpeg's 44-byte bitexact header: 52,428,789 frames make exactly 200 MiB. */
const SAMPLE_RATE = 48_000
const FRAMES = (200 * MiB - 44) / 4
const DURATION_SECONDS = FRAMES / SAMPLE_RATE // 1092.266…

/**
 * The API's resident memory may grow by less than this from just after start to the peak of
 * upload and validation. Measured on a 2-core machine: 30-60 MiB. That is garbage, not data
 * kept: V8 collects dead Buffers (the S3 response's socket chunks, 64 KiB each) only once about
 * 64 MiB of them have piled up since the last collection, so up to that much plus some young
 * heap is normal and does not grow with the file. Anything holding the file grows by its size:
 * with the validation feed keeping every chunk (the bug `Stream.runForEachWhile` caused in the
 * ffmpeg probe) the growth was 182-192 MiB; a whole-file buffer would add 200 MiB.
 */
const FLAT_BOUND_BYTES = 100 * MiB

const exec = promisify(execFile)
const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`

describe("S3 multipart upload end to end (200 MiB, API as its own process)", () => {
  const workDir = mkdtempSync(join(tmpdir(), "hush-s3-multipart-"))
  const dataDir = join(workDir, "data")
  const wavPath = join(workDir, "long.wav")
  const s3Scope = Effect.runSync(Scope.make())
  let api: HushProcess | undefined
  let apiPid: number | undefined

  afterAll(async () => {
    if (api !== undefined) {
      const stopped = await Promise.race([api.stop("SIGTERM"), new Promise((resolve) => setTimeout(() => resolve("timeout"), 10_000))])
      if (stopped === "timeout") {
        // a server that does not stop: end it, then whatever is left of its process group
        if (apiPid !== undefined) {
          try {
            process.kill(apiPid, "SIGKILL")
          } catch {
            // already gone
          }
        }
        await api.stop("SIGKILL")
      }
    }
    await Effect.runPromise(Scope.close(s3Scope, Exit.void))
    rmSync(workDir, { recursive: true, force: true })
  })

  it("creates, uploads 4 parts with fetch, completes with the ETags and validates, the API's memory flat", async () => {
    const started = Date.now()
    const lap = (() => {
      let last = started
      const laps: Array<string> = []
      return Object.assign((name: string) => {
        const now = Date.now()
        const memory = apiPid === undefined ? undefined : residentMemory(apiPid)
        laps.push(`${name} ${((now - last) / 1000).toFixed(1)}s` + (memory === undefined ? "" : ` (API RSS ${mib(memory.rssBytes)})`))
        last = now
      }, { laps })
    })()

    // S3 in this process; the audio made by ffmpeg straight to disk, in parallel with the start
    const [s3] = await Promise.all([
      Effect.runPromise(Scope.extend(startS3rver({ bucket: "hush-multipart-e2e" }), s3Scope)) as Promise<RunningS3rver>,
      exec("ffmpeg", [
        "-hide_banner", "-loglevel", "error", "-y",
        "-f", "lavfi", "-i", `sine=frequency=440:sample_rate=${SAMPLE_RATE}`,
        "-af", `atrim=end_sample=${FRAMES}`, "-ac", "2", "-c:a", "pcm_s16le",
        // no LIST/encoder chunk: a 44-byte header, so the size is exactly 200 MiB
        "-fflags", "+bitexact", "-flags:a", "+bitexact",
        wavPath
      ])
    ])
    const sizeBytes = (await stat(wavPath)).size
    expect(sizeBytes).toBe(200 * MiB)

    const port = await freePort()
    const baseUrl = `http://127.0.0.1:${port}`
    const env = {
      PORT: String(port),
      DATA_DIR: dataDir,
      PUBLIC_BASE_URL: baseUrl,
      HUSH_ENV: "development",
      HUSH_STORE: "embedded",
      HUSH_WORKER: "off",
      S3_BUCKET: s3.bucket,
      S3_ENDPOINT: s3.endpoint,
      S3_REGION: "us-east-1",
      S3_FORCE_PATH_STYLE: "true",
      S3_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
      S3_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey
    }
    api = startProcess("apps/api/server/main.ts", env)
    apiPid = await entryPid(api)
    await waitForHealth(baseUrl, api)
    const server = { baseUrl } as TestServer
    const account = await runCli(["admin", "account", "create", "--email", "multipart@example.com"], env)
    lap("setup")

    // Memory after start: settled for a moment, the peak counter reset, then sampled every 100 ms
    // for the whole flow (VmHWM also catches a spike between two samples).
    await new Promise((resolve) => setTimeout(resolve, 500))
    const pid = apiPid
    const baseline = residentMemory(pid)!.rssBytes
    const peakReset = resetPeakMemory(pid)
    let sampledPeak = baseline
    let samples = 0
    const sampler = setInterval(() => {
      const memory = residentMemory(pid)
      if (memory === undefined) return
      samples++
      sampledPeak = Math.max(sampledPeak, memory.rssBytes)
    }, 100)

    let fileId = ""
    let fileMd5 = ""
    try {
      const created = await createFile(server, account.live_key, { filename: "long.wav", size_bytes: sizeBytes, content_type: "audio/wav" })
      expect(created.status, created.text).toBe(201)
      expect(created.json.status).toBe("uploading")
      fileId = created.json.id
      const upload = created.json.upload
      expect(upload.method).toBe("multipart")
      expect(upload.part_size).toBe(PART_SIZE)
      expect(upload.parts.map((p: { part_number: number }) => p.part_number)).toEqual([1, 2, 3, 4])
      for (const part of upload.parts) expect(part.url).toMatch(new RegExp(`^${s3.endpoint}/${s3.bucket}/`))

      // one part in memory at a time; the whole file's MD5 computed on the way
      const md5 = createHash("md5")
      const etags: Array<{ part_number: number; etag: string }> = []
      const file = await open(wavPath, "r")
      try {
        for (const part of upload.parts as Array<{ part_number: number; url: string }>) {
          const start = (part.part_number - 1) * PART_SIZE
          const length = Math.min(PART_SIZE, sizeBytes - start)
          const bytes = Buffer.allocUnsafe(length)
          const { bytesRead } = await file.read(bytes, 0, length, start)
          expect(bytesRead).toBe(length)
          md5.update(bytes)
          const response = await fetch(part.url, { method: "PUT", body: bytes })
          expect(response.status, await response.text()).toBe(200)
          const etag = response.headers.get("etag")
          expect(etag).toMatch(/^"?[0-9a-f]{32}"?$/)
          etags.push({ part_number: part.part_number, etag: etag! })
        }
      } finally {
        await file.close()
      }
      fileMd5 = md5.digest("hex")
      lap("upload")

      const completed = await complete(server, account.live_key, created.json.id, { parts: etags })
      expect(completed.status, completed.text).toBe(202)
      expect(completed.json.status).toBe("validating")
      lap("complete")

      const ready = await pollUntil(
        () => call(server, "GET", `/v1/files/${created.json.id}`, { key: account.live_key }),
        (reply) => reply.json?.status !== "validating",
        60_000
      )
      lap("validation")
      expect(ready.json.status, ready.text).toBe("ready")
      expect(ready.json.size_bytes).toBe(sizeBytes)
      expect(Math.abs(ready.json.duration_seconds - DURATION_SECONDS)).toBeLessThan(0.1)
    } finally {
      clearInterval(sampler)
    }
    const final = residentMemory(pid)!
    // with the reset, VmHWM is the peak of the flow; without it (refused), it may be start-up's
    const peak = peakReset ? Math.max(sampledPeak, final.peakBytes) : sampledPeak

    // The object in S3 is the file, byte for byte (and in part order): same size and MD5.
    const client = new S3Client({
      endpoint: s3.endpoint,
      region: "us-east-1",
      forcePathStyle: true,
      credentials: S3RVER_CREDENTIALS,
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED"
    })
    try {
      // the API keeps the input under inputs/<file id> (core/services/files.ts)
      const key = `inputs/${fileId}`
      const head = await client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: key }))
      expect(head.ContentLength).toBe(sizeBytes)
      const object = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }))
      const storedMd5 = createHash("md5")
      for await (const chunk of object.Body as Readable) storedMd5.update(chunk as Buffer)
      expect(storedMd5.digest("hex")).toBe(fileMd5)
    } finally {
      client.destroy()
    }
    lap("check in S3")

    console.info(
      `S3 multipart e2e: ${lap.laps.join(", ")}, total ${((Date.now() - started) / 1000).toFixed(1)}s; ` +
        `API RSS after start ${mib(baseline)}, peak ${mib(peak)} (sampled ${mib(sampledPeak)} over ${samples} samples, ` +
        `VmHWM ${peakReset ? mib(final.peakBytes) : "not reset"}), growth ${mib(peak - baseline)}, at the end ${mib(final.rssBytes)}`
    )
    expect(samples).toBeGreaterThan(10)
    expect(peak - baseline).toBeLessThan(FLAT_BOUND_BYTES)
  }, 150_000)
})
