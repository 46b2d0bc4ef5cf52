/**
 * How `hush` reports a failure (apps/cli/user/failure.ts, issue 31): each kind of failure the
 * typed client ends with, produced by the real client against a small scripted server (a
 * problem answer, no connection, no answer in time, an answer of the wrong form, a success
 * that is not JSON), reaches the CLI's printer and comes out as one or two lines that name the
 * problem: never the schema's tree, never "an answer did not match the API". Then the same
 * through the whole command (runUserCommand), with its exit codes.
 */
import { FetchHttpClient } from "@effect/platform"
import { Effect, Either } from "effect"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeHushClient } from "../../../apps/client/index.js"
import { EXIT } from "../../../apps/cli/user/args.js"
import { describeFailure } from "../../../apps/cli/user/failure.js"
import { runUserCommand } from "../../../apps/cli/user/run.js"
import { freePort } from "../../support/ports.js"

/** What the scripted server answers on each path. */
const ROUTES: Record<string, (res: ServerResponse) => void> = {
  "/problem/v1/credits": (res) => {
    res.writeHead(402, { "content-type": "application/problem+json", "x-request-id": "req_problem1" })
    res.end(JSON.stringify({
      type: "https://docs.hush.example/errors/insufficient_credit", title: "Insufficient credit", status: 402,
      detail: "this job needs $0.001 and $0.00 is available", code: "insufficient_credit", request_id: "req_problem1"
    }))
  },
  // a model list whose first entry lacks most fields: the schema's tree would be a dozen lines
  "/malformed/v1/models": (res) => {
    res.writeHead(200, { "content-type": "application/json" })
    res.end(JSON.stringify({ object: "list", data: [{ id: "xiph/rnnoise" }] }))
  },
  // a proxy's page in place of the API's JSON
  "/html/v1/models": (res) => {
    res.writeHead(200, { "content-type": "text/html" })
    res.end("<html><body>Welcome to nginx!</body></html>")
  },
  // headers never come
  "/hang/v1/models": () => undefined
}

let baseUrl = ""
const hanging: Array<ServerResponse> = []
const server = createServer((req: IncomingMessage, res) => {
  req.resume()
  const route = ROUTES[req.url ?? ""]
  if (route === undefined) {
    res.writeHead(404).end()
    return
  }
  hanging.push(res)
  route(res)
})

beforeAll(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => {
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  resolve()
})))
afterAll(() => {
  for (const res of hanging) res.destroy()
  return new Promise<void>((resolve) => server.close(() => resolve()))
})

/** The failure the real client ends with for `call` against `base`, quickly (short timeout, two attempts). */
const failureOf = (base: string, call: "listModels" | "getCredits") =>
  Effect.runPromise(Effect.gen(function*() {
    const hush = yield* makeHushClient({ apiKey: "hush_live_x", baseUrl: base, timeoutMs: 300, retry: { maxAttempts: 2, baseDelayMs: 1 } })
    return yield* (call === "listModels" ? hush.public.listModels() : hush.account.getCredits())
  }).pipe(Effect.provide(FetchHttpClient.layer), Effect.either)).then((result) => {
    if (Either.isRight(result)) throw new Error("the call succeeded")
    return result.left
  })

/** What every report must be: one or two lines, starting `error:`, with no schema tree. */
const expectShortReport = (message: string) => {
  const lines = message.split("\n")
  expect(lines.length).toBeGreaterThanOrEqual(1)
  expect(lines.length).toBeLessThanOrEqual(2)
  expect(lines[0]).toMatch(/^error: /)
  expect(message).not.toMatch(/└─|Encoded side|did not match the API|\(\(\(/)
  for (const line of lines) expect(line.length).toBeLessThan(400)
}

describe("the CLI's report of each failure of the typed client", () => {
  it("a problem answer: its title and detail, then its code and request_id; the exit code of its code", async () => {
    const error = await failureOf(`${baseUrl}/problem`, "getCredits")
    const report = describeFailure(error, { baseUrl })
    expectShortReport(report.message)
    expect(report.message).toBe(
      "error: Insufficient credit: this job needs $0.001 and $0.00 is available\n  code: insufficient_credit  request_id: req_problem1"
    )
    expect(report.exitCode).toBe(EXIT.credit)
    expect(report.json.error).toMatchObject({ status: 402, code: "insufficient_credit", request_id: "req_problem1" })
  })

  it("no connection: where it tried and why, exit 9", async () => {
    const closed = `http://127.0.0.1:${await freePort()}`
    const error = await failureOf(closed, "listModels")
    const report = describeFailure(error, { baseUrl: closed })
    expectShortReport(report.message)
    expect(report.message).toContain(`error: cannot reach Hush at ${closed}`)
    expect(report.message).toContain("connection refused")
    expect(report.exitCode).toBe(EXIT.unavailable)
    expect(report.json.error.code).toBe("network_error")
  })

  it("no answer in time: said so, with the limit, exit 9", async () => {
    const error = await failureOf(`${baseUrl}/hang`, "listModels")
    const report = describeFailure(error, { baseUrl })
    expectShortReport(report.message)
    expect(report.message).toContain(`error: Hush at ${baseUrl} did not answer in time (the API did not answer within 0.3 s)`)
    expect(report.exitCode).toBe(EXIT.unavailable)
    expect(report.json.error.code).toBe("timeout")
  })

  it("an answer of the wrong form: the first thing wrong, on one line, and what to check; exit 1", async () => {
    const error = await failureOf(`${baseUrl}/malformed`, "listModels")
    const report = describeFailure(error, { baseUrl })
    expectShortReport(report.message)
    expect(report.message).toMatch(new RegExp(`^error: the answer from ${baseUrl} is not what this CLI expects \\(data\\[0\\]\\.\\w+: is missing\\)$`, "m"))
    expect(report.message).toContain("HUSH_BASE_URL")
    expect(report.exitCode).toBe(EXIT.failure)
    expect(report.json.error.code).toBe("invalid_response")
  })

  it("a success that is not JSON (a proxy's page): the same report, exit 1", async () => {
    const error = await failureOf(`${baseUrl}/html`, "listModels")
    const report = describeFailure(error, { baseUrl })
    expectShortReport(report.message)
    expect(report.message).toMatch(/^error: the answer from .* is not what this CLI expects \(.*JSON.*\)$/m)
    expect(report.exitCode).toBe(EXIT.failure)
  })

  it("anything else: one line saying it was unexpected, exit 1", () => {
    const report = describeFailure(new TypeError("Cannot read properties of undefined (reading 'id')\n    at somewhere (x.js:1:1)"), { baseUrl })
    expectShortReport(report.message)
    expect(report.message.split("\n")[0]).toBe("error: unexpected failure: TypeError: Cannot read properties of undefined (reading 'id') at somewhere (x.js:1:1)")
    expect(report.exitCode).toBe(EXIT.failure)
  })
})

/** runUserCommand with its output collected. */
const run = async (argv: ReadonlyArray<string>, env: Record<string, string>) => {
  let stdout = ""
  let stderr = ""
  const stream = (append: (text: string) => void) => ({ write: (chunk: string) => (append(chunk), true), isTTY: false }) as unknown as NodeJS.WriteStream
  const code = await runUserCommand(argv, {
    env,
    stdout: stream((text) => (stdout += text)),
    stderr: stream((text) => (stderr += text))
  })
  return { code, stdout, stderr }
}

describe("through the whole command", () => {
  it("hush models against an answer of the wrong form: two lines, exit 1; --json prints the error", async () => {
    const result = await run(["models", "--json"], { HUSH_BASE_URL: `${baseUrl}/malformed` })
    expect(result.code).toBe(1)
    expectShortReport(result.stderr.trimEnd())
    expect(JSON.parse(result.stdout).error.code).toBe("invalid_response")
  })

  it("hush credits against a problem answer: its title, detail, code and request_id, exit 4", async () => {
    const result = await run(["credits"], { HUSH_BASE_URL: `${baseUrl}/problem`, HUSH_API_KEY: "hush_live_x" })
    expect(result.code).toBe(4)
    expect(result.stderr).toBe("error: Insufficient credit: this job needs $0.001 and $0.00 is available\n  code: insufficient_credit  request_id: req_problem1\n")
  })
})
