/**
 * `hush` end to end (issue 13): the real command (bin/hush.mjs, its own process) against a
 * server started here, through a proxy that the signed storage URLs also point at, so every
 * upload PUT is counted and can be hung or cut.
 *
 * - test mode: a 3-second WAV denoised with one command, output = the test-mode sample;
 * - `--json` of every command parses; `--no-wait`; `jobs list|get|cancel`, `credits`, `models`;
 * - exit codes (apps/cli/user/args.ts) with the problem's title, detail and request_id printed;
 * - checks before sending (decisions.md, Command line): an empty or unreadable input and an
 *   existing output (without --force) are refused before any request; an unknown or retired
 *   model and a live account short of a job's minimum before any upload;
 * - test mode says what it is: the output is the sample clip and nothing was charged;
 * - a multipart upload (1 MiB parts on this server) interrupted by Ctrl-C once most parts are
 *   sent resumes on the next run without re-sending them; a connection cut halfway through a
 *   part is retried.
 */
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { SAMPLE_MP3 } from "../support/fake-gpu-provider.js"
import { hush, startHush } from "../support/cli.js"
import { startTestServer, type TestServer } from "../support/server.js"
import { startStorageProxy, type StorageProxy } from "../support/storage-proxy.js"
import { call, junk, pollUntil, tone } from "./helpers.js"

const MiB = 1024 * 1024

let dir = ""
let proxy: StorageProxy
let server: TestServer
let account: Awaited<ReturnType<TestServer["createAccount"]>>
const path = (name: string) => join(dir, name)

const env = (key: string | undefined = account.testKey, extra: Record<string, string> = {}) => ({
  HUSH_API_KEY: key,
  HUSH_BASE_URL: proxy.url,
  HUSH_CACHE_DIR: path("cache"),
  HUSH_POLL_INTERVAL_MS: "100",
  ...extra
})

/** The problem's title, detail and request_id as the CLI prints them on stderr. */
const expectPrintedProblem = (stderr: string, code: string) => {
  expect(stderr).toMatch(/^error: [^:\n]+: .+$/m)
  expect(stderr).toMatch(new RegExp(`code: ${code}  request_id: req_\\w+`))
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "hush-cli-"))
  proxy = await startStorageProxy()
  // small parts, so that an upload of a few MiB is multipart (production: 64 MiB parts over 100 MiB)
  server = await startTestServer({ publicBaseUrl: proxy.url, limits: { putMaxBytes: 2 * MiB, multipartPartBytes: 1 * MiB } })
  proxy.setTarget(server.baseUrl)
  account = await server.createAccount(0)
  await writeFile(path("interview.wav"), tone(3))
}, 60_000)

afterAll(async () => {
  await server?.close()
  await proxy?.close()
  await rm(dir, { recursive: true, force: true })
})

describe("hush denoise, test mode", { timeout: 120_000 }, () => {
  it("denoises a 3-second file with one command: one PUT, plain progress lines, the sample MP3 saved beside the input", async () => {
    proxy.puts.length = 0
    const run = await hush(["denoise", path("interview.wav")], env())
    expect(run.code, run.stderr).toBe(0)
    const saved = path("interview.denoised.mp3")
    expect(run.stdout.trim()).toBe(saved)
    expect(new Uint8Array(await readFile(saved))).toEqual(SAMPLE_MP3)
    expect(proxy.puts.map(({ partNumber, outcome }) => ({ partNumber, outcome }))).toEqual([{ partNumber: undefined, outcome: 200 }])
    // not a terminal: plain lines, no carriage returns or escape codes
    expect(run.stderr).not.toMatch(/[\r\x1b]/)
    expect(run.stderr).toMatch(/^Uploading  100%/m)
    expect(run.stderr).toMatch(/^Denoising  100%  succeeded$/m)
    expect(run.stderr).toMatch(/^Saved .*interview\.denoised\.mp3$/m)
    // a test key's output is not the caller's audio, and nothing was charged: said so, no "billed"
    expect(run.stderr).toContain("Test mode: the output is Hush's sample clip, not your audio, and nothing was charged")
    expect(run.stderr).not.toMatch(/billed|estimated/)
  })

  it("the same command again refuses to overwrite the output (exit 2, nothing sent); --force runs it", async () => {
    proxy.puts.length = 0
    const again = await hush(["denoise", path("interview.wav")], env())
    expect(again.code).toBe(2)
    expect(again.stderr).toBe(`error: ${path("interview.denoised.mp3")} already exists: pass --force to overwrite it, or -o to save elsewhere\n`)
    expect(proxy.puts).toHaveLength(0)
    await writeFile(path("interview.denoised.mp3"), "an older result")
    const forced = await hush(["denoise", path("interview.wav"), "--force"], env())
    expect(forced.code, forced.stderr).toBe(0)
    expect(new Uint8Array(await readFile(path("interview.denoised.mp3")))).toEqual(SAMPLE_MP3)
  })

  it("jobs get of a test job says the output is the sample clip", async () => {
    const run = await hush(["denoise", path("interview.wav"), "--no-wait"], env())
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).toContain("Test mode: the output is Hush's sample clip")
    const got = await hush(["jobs", "get", run.stdout.trim()], env())
    expect(got.code, got.stderr).toBe(0)
    expect(got.stdout).toMatch(/^note: +Test mode: the output is Hush's sample clip, not your audio, and nothing was charged/m)
  })

  it("--json prints one JSON document: the file, the succeeded job and the saved output", async () => {
    const run = await hush(["denoise", path("interview.wav"), "-o", path("out.mp3"), "--json"], env())
    expect(run.code, run.stderr).toBe(0)
    const result = JSON.parse(run.stdout)
    expect(result.job).toMatchObject({ object: "job", status: "succeeded", mode: "test", input: { file: result.file.id } })
    expect(result.file).toMatchObject({ status: "ready", filename: "interview.wav" })
    expect(result.output).toEqual({ path: path("out.mp3"), size_bytes: SAMPLE_MP3.length })
    expect((await stat(path("out.mp3"))).size).toBe(SAMPLE_MP3.length)

    // the job is then seen by the other commands, each of whose --json parses
    const got = await hush(["jobs", "get", result.job.id, "--json"], env())
    expect(got.code, got.stderr).toBe(0)
    expect(JSON.parse(got.stdout)).toMatchObject({ id: result.job.id, status: "succeeded" })
    const list = await hush(["jobs", "list", "--status", "succeeded", "--limit", "1", "--json"], env())
    expect(list.code, list.stderr).toBe(0)
    const page = JSON.parse(list.stdout)
    expect(page.data).toHaveLength(1)
    expect(page.data[0].id).toBe(result.job.id)
    expect(typeof page.next_cursor).toBe("string")
    const credits = await hush(["credits", "--json"], env())
    expect(credits.code, credits.stderr).toBe(0)
    expect(JSON.parse(credits.stdout)).toMatchObject({ currency: "usd", available_micros: 0 })
    const models = await hush(["models", "--json"], env(undefined))
    expect(models.code, models.stderr).toBe(0)
    expect(JSON.parse(models.stdout).data.map((m: { id: string }) => m.id)).toContain("xiph/rnnoise")
  })

  it("--strength, --format and --loudness reach the job; the saved output is in that format, named after it", async () => {
    const run = await hush(["denoise", path("interview.wav"), "--strength", "0.5", "--format", "wav", "--loudness", "-16", "--json"], env())
    expect(run.code, run.stderr).toBe(0)
    const result = JSON.parse(run.stdout)
    expect(result.job.options).toEqual({ strength: 0.5, output: { format: "wav", loudness: -16 } })
    expect(result.output.path).toMatch(/\.wav$/)
    const saved = await readFile(result.output.path)
    expect(saved.subarray(0, 4).toString("latin1")).toBe("RIFF")
    expect(saved.subarray(8, 12).toString("latin1")).toBe("WAVE")
  })

  it("an option out of range is a usage error (exit 2) before anything is uploaded", async () => {
    proxy.puts.length = 0
    const run = await hush(["denoise", path("interview.wav"), "--strength", "1.5"], env())
    expect(run.code).toBe(2)
    expect(run.stderr).toMatch(/strength/)
    expect(proxy.puts).toHaveLength(0)
  })

  it("--no-wait prints the job id at once; cancelling a finished job exits 6 with the problem", async () => {
    const run = await hush(["denoise", path("interview.wav"), "--no-wait"], env())
    expect(run.code, run.stderr).toBe(0)
    const jobId = run.stdout.trim()
    expect(jobId).toMatch(/^job_/)
    // test jobs finish almost at once: wait for it, then cancel is refused
    await pollUntil(() => call(server, "GET", `/v1/jobs/${jobId}`, { key: account.testKey }), (r) => r.json?.status === "succeeded")
    const cancel = await hush(["jobs", "cancel", jobId, "--json"], env())
    expect(cancel.code).toBe(6)
    expectPrintedProblem(cancel.stderr, "job_not_cancelable")
    expect(JSON.parse(cancel.stdout).error).toMatchObject({ code: "job_not_cancelable", status: 409, request_id: expect.stringMatching(/^req_/) })
  })
})

describe("exit codes", { timeout: 120_000 }, () => {
  it("0 and 2 through the package bin (`npx hush`): --version, no command", async () => {
    const [version, bare] = await Promise.all([hush(["--version"], env(), "bin/hush.mjs"), hush([], env(), "bin/hush.mjs")])
    expect(version).toMatchObject({ code: 0, stdout: "hush 1.0.0\n" })
    expect(bare.code).toBe(2)
    expect(bare.stdout).toContain("usage: hush <command>")
  })

  it("2: usage (no key, unknown option, missing input)", async () => {
    const [noKey, badOption, missing] = await Promise.all([
      hush(["credits"], env("")),
      hush(["denoise", path("interview.wav"), "--strenght", "1"], env()),
      hush(["denoise", path("nothing.wav")], env())
    ])
    expect([noKey.code, badOption.code, missing.code]).toEqual([2, 2, 2])
    expect(noKey.stderr).toContain("HUSH_API_KEY")
    expect(badOption.stderr).toContain("--strenght")
    expect(missing.stderr).toContain("ENOENT")
  })

  it("3: an unknown key, with the problem's title, detail and request_id", async () => {
    const run = await hush(["credits"], env("hush_test_" + "x".repeat(43)))
    expect(run.code).toBe(3)
    expectPrintedProblem(run.stderr, "unauthorized")
  })

  it("4: not enough credit for a live job's minimum charge, refused before anything is uploaded", async () => {
    proxy.puts.length = 0
    const run = await hush(["denoise", path("interview.wav"), "-o", path("no-credit.mp3"), "--json"], env(account.liveKey))
    expect(run.code).toBe(4)
    expect(run.stderr).toBe(
      "error: not enough credit: a job on xiph/rnnoise costs at least $0.001 (10 s at $0.0001 per second) and $0.00 is available\n" +
      `  add credit at ${proxy.url}/dashboard/credits, then run the same command again\n`
    )
    expect(JSON.parse(run.stdout).error.code).toBe("insufficient_credit")
    expect(proxy.puts).toHaveLength(0)
  })

  it("4: enough for the minimum but not for the audio's length: the API's problem, after the upload", async () => {
    const { liveKey } = await server.createAccount(1_000)
    await writeFile(path("twelve.wav"), tone(12))
    const run = await hush(["denoise", path("twelve.wav"), "--json"], env(liveKey))
    expect(run.code).toBe(4)
    expectPrintedProblem(run.stderr, "insufficient_credit")
    expect(JSON.parse(run.stdout).error.code).toBe("insufficient_credit")
  })

  it("5: an unknown or a retired model, refused before anything is uploaded", async () => {
    proxy.puts.length = 0
    const [unknown, retired] = await Promise.all([
      hush(["denoise", path("interview.wav"), "-o", path("m1.mp3"), "--model", "acme/nothing"], env()),
      hush(["denoise", path("interview.wav"), "-o", path("m2.mp3"), "--model", "hush/denoise-pro", "--json"], env())
    ])
    expect(unknown.code).toBe(5)
    expect(unknown.stderr).toMatch(/^error: there is no model 'acme\/nothing' here; usable: xiph\/rnnoise/)
    expect(retired.code).toBe(5)
    expect(retired.stderr).toMatch(/^error: model 'hush\/denoise-pro' is retired here \(listed, not usable\)/)
    expect(JSON.parse(retired.stdout).error.code).toBe("model_not_available")
    expect(unknown.stderr.trimEnd().split("\n").length).toBeLessThanOrEqual(2)
    expect(proxy.puts).toHaveLength(0)
  })

  it("5: an input the API refuses (a media type; audio that does not decode)", async () => {
    await writeFile(path("notes.txt"), "not audio")
    await writeFile(path("junk.wav"), junk(4096))
    const [type, undecodable] = await Promise.all([
      hush(["denoise", path("notes.txt")], env()),
      hush(["denoise", path("junk.wav")], env())
    ])
    expect(type.code).toBe(5)
    expectPrintedProblem(type.stderr, "unsupported_media_type")
    expect(undecodable.code).toBe(5)
    expect(undecodable.stderr).toMatch(/rejected: invalid_audio/)
  })

  it("6: no such job", async () => {
    const run = await hush(["jobs", "get", "job_doesnotexist"], env())
    expect(run.code).toBe(6)
    expectPrintedProblem(run.stderr, "not_found")
  })
})

describe("checks before any request", { timeout: 60_000 }, () => {
  /** A stand-in for the API that counts what reaches it: these refusals must send nothing. */
  const counting = async () => {
    let requests = 0
    const listener = createServer((_req, res) => {
      requests++
      res.writeHead(500).end()
    })
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve))
    return {
      url: `http://127.0.0.1:${(listener.address() as AddressInfo).port}`,
      requests: () => requests,
      close: () => new Promise<void>((resolve) => listener.close(() => resolve()))
    }
  }

  it("2: an empty input, a missing one, a folder, an existing output: one line each, no request", async () => {
    const api = await counting()
    try {
      await writeFile(path("empty.wav"), "")
      await mkdir(path("folder.wav"), { recursive: true })
      await writeFile(path("taken.mp3"), "mine")
      const at = { HUSH_BASE_URL: api.url }
      const runs = await Promise.all([
        hush(["denoise", path("empty.wav")], env(undefined, at)),
        hush(["denoise", path("absent.wav")], env(undefined, at)),
        hush(["denoise", path("folder.wav")], env(undefined, at)),
        hush(["denoise", path("interview.wav"), "-o", path("taken.mp3")], env(undefined, at))
      ])
      expect(runs.map((r) => r.code)).toEqual([2, 2, 2, 2])
      expect(runs.map((r) => r.stderr)).toEqual([
        `error: ${path("empty.wav")} is empty (0 bytes): there is no audio to denoise\n`,
        `error: cannot read ${path("absent.wav")}: no such file (ENOENT)\n`,
        `error: ${path("folder.wav")} is not a file\n`,
        `error: ${path("taken.mp3")} already exists: pass --force to overwrite it, or -o to save elsewhere\n`
      ])
      expect(api.requests()).toBe(0)
      expect(await readFile(path("taken.mp3"), "utf8")).toBe("mine")
    } finally {
      await api.close()
    }
  })
})

describe("a multipart upload", { timeout: 120_000 }, () => {
  const SIZE = 6 * MiB + 12_345 // 7 parts of 1 MiB, the last one short

  beforeAll(async () => {
    // a WAV of 8 kHz 16-bit mono: 6 MiB is about 6.5 minutes
    await writeFile(path("long.wav"), tone(Math.ceil(SIZE / 16_000)).subarray(0, SIZE))
  })

  it("interrupted by Ctrl-C once most parts are sent, resumes without re-sending them", async () => {
    proxy.puts.length = 0
    // part 3 never gets an answer: the others finish, then the user presses Ctrl-C
    proxy.onPut = ({ partNumber }) => (partNumber === 3 ? "hang" : "pass")
    const first = startHush(["denoise", path("long.wav"), "--json"], env())
    for (let i = 0; i < 600 && proxy.puts.filter((p) => p.outcome === 200).length < 6; i++) await new Promise((r) => setTimeout(r, 50))
    expect(proxy.puts.filter((p) => p.outcome === 200).map((p) => p.partNumber).sort()).toEqual([1, 2, 4, 5, 6, 7])
    first.child.kill("SIGINT")
    const stopped = await first.done
    expect(stopped.code, stopped.stderr).toBe(130)
    expect(stopped.stderr).toMatch(/interrupted: upload of file_\w+ stopped; run the same command again to resume it/)

    proxy.puts.length = 0
    proxy.onPut = () => "pass"
    const second = await hush(["denoise", path("long.wav"), "--json"], env())
    expect(second.code, second.stderr).toBe(0)
    expect(second.stderr).toMatch(/Resuming the upload of file_\w+: 6 of 7 parts already sent/)
    // only the part that had not finished is sent again
    expect(proxy.puts.map(({ partNumber, outcome }) => ({ partNumber, outcome }))).toEqual([{ partNumber: 3, outcome: 200 }])
    const result = JSON.parse(second.stdout)
    expect(result.file).toMatchObject({ status: "ready", size_bytes: SIZE })
    expect(result.job.status).toBe("succeeded")
  })

  it("retries a part whose connection is cut halfway, in the same run", async () => {
    proxy.puts.length = 0
    proxy.onPut = ({ partNumber, attempt }) => (partNumber === 2 && attempt === 0 ? "drop" : "pass")
    await writeFile(path("long2.wav"), await readFile(path("long.wav")))
    const run = await hush(["denoise", path("long2.wav")], env())
    proxy.onPut = () => "pass"
    expect(run.code, run.stderr).toBe(0)
    expect(proxy.puts.filter((p) => p.partNumber === 2).map((p) => p.outcome)).toEqual(["dropped", 200])
    expect(proxy.puts.filter((p) => p.outcome === 200)).toHaveLength(7)
  })
})
