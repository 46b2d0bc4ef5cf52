import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import {
  CheckoutRequest, CompleteIn, CreateIn, DenoiseIn, Job, JobListParams, JobPage, KeyCreateRequest, OAuthStartRequest,
  UsageQuery
} from "../../../core/schema/index.js"

const accepts = <A, I>(schema: Schema.Schema<A, I>, input: unknown) =>
  Either.isRight(Schema.decodeUnknownEither(schema)(input))

describe("CreateIn", () => {
  const base = { filename: "interview.wav", size_bytes: 1024, content_type: "audio/wav" }

  it("accepts a valid request", () => expect(accepts(CreateIn, base)).toBe(true))

  it("bounds filename to 1..1024 characters", () => {
    expect(accepts(CreateIn, { ...base, filename: "" })).toBe(false)
    expect(accepts(CreateIn, { ...base, filename: "a".repeat(1025) })).toBe(false)
    expect(accepts(CreateIn, { ...base, filename: "a".repeat(1024) })).toBe(true)
  })

  it("wants a positive integer size", () => {
    expect(accepts(CreateIn, { ...base, size_bytes: 0 })).toBe(false)
    expect(accepts(CreateIn, { ...base, size_bytes: 1.5 })).toBe(false)
    expect(accepts(CreateIn, { ...base, size_bytes: "10" })).toBe(false)
  })
})

describe("DenoiseIn", () => {
  it("bounds file to 1..64 characters", () => {
    expect(accepts(DenoiseIn, { file: "f".repeat(64) })).toBe(true)
    expect(accepts(DenoiseIn, { file: "f".repeat(65) })).toBe(false)
    expect(accepts(DenoiseIn, { file: "" })).toBe(false)
  })

  it("takes model as optional string-or-null up to 200", () => {
    expect(accepts(DenoiseIn, { file: "file_a", model: null })).toBe(true)
    expect(accepts(DenoiseIn, { file: "file_a", model: "xiph/rnnoise" })).toBe(true)
    expect(accepts(DenoiseIn, { file: "file_a", model: "m".repeat(201) })).toBe(false)
  })
})

describe("KeyCreateRequest", () => {
  it("defaults name to empty and allows null scopes", () => {
    expect(Schema.decodeUnknownSync(KeyCreateRequest)({ mode: "test", scopes: null })).toEqual({
      mode: "test",
      name: "",
      scopes: null
    })
  })

  it("rejects 11 scopes", () => {
    expect(accepts(KeyCreateRequest, { mode: "live", scopes: Array(10).fill("jobs:read") })).toBe(true)
    expect(accepts(KeyCreateRequest, { mode: "live", scopes: Array(11).fill("jobs:read") })).toBe(false)
  })

  it("rejects an unknown scope and an unknown mode", () => {
    expect(accepts(KeyCreateRequest, { mode: "live", scopes: ["files:read"] })).toBe(false)
    expect(accepts(KeyCreateRequest, { mode: "prod" })).toBe(false)
  })

  it("bounds name to 100 characters", () => {
    expect(accepts(KeyCreateRequest, { mode: "live", name: "n".repeat(101) })).toBe(false)
  })
})

describe("CheckoutRequest", () => {
  it("needs at least 10,000,000 micros", () => {
    expect(accepts(CheckoutRequest, { amount_micros: 9_999_999 })).toBe(false)
    expect(accepts(CheckoutRequest, { amount_micros: 10_000_000 })).toBe(true)
    expect(accepts(CheckoutRequest, { amount_micros: 10_000_000.5 })).toBe(false)
  })
})

describe("JobListParams", () => {
  it("bounds limit to 1..100, from a string", () => {
    expect(accepts(JobListParams, { limit: "0" })).toBe(false)
    expect(accepts(JobListParams, { limit: "101" })).toBe(false)
    expect(accepts(JobListParams, { limit: "2.5" })).toBe(false)
    expect(accepts(JobListParams, { limit: "abc" })).toBe(false)
    expect(Schema.decodeUnknownSync(JobListParams)({ limit: "20" })).toEqual({ limit: 20 })
  })

  it("accepts no parameters and rejects an unknown status", () => {
    expect(Schema.decodeUnknownSync(JobListParams)({})).toEqual({})
    expect(accepts(JobListParams, { status: "done" })).toBe(false)
    expect(accepts(JobListParams, { status: "queued", model: "xiph/rnnoise", cursor: "abc" })).toBe(true)
  })
})

describe("other bounds", () => {
  it("CompleteIn takes absent, null or a list of parts", () => {
    expect(accepts(CompleteIn, {})).toBe(true)
    expect(accepts(CompleteIn, { parts: null })).toBe(true)
    expect(accepts(CompleteIn, { parts: [{ part_number: 1, etag: "\"abc\"" }] })).toBe(true)
    expect(accepts(CompleteIn, { parts: [{ part_number: 0, etag: "x" }] })).toBe(false)
    expect(accepts(CompleteIn, { parts: [{ part_number: 1 }] })).toBe(false)
  })

  it("UsageQuery wants real YYYY-MM-DD dates", () => {
    expect(accepts(UsageQuery, { from: "2025-01-31", to: "2025-02-28", group: "model", mode: "test" })).toBe(true)
    expect(accepts(UsageQuery, { from: "2025-02-30" })).toBe(false)
    expect(accepts(UsageQuery, { to: "2025-1-5" })).toBe(false)
    expect(accepts(UsageQuery, { group: "week" })).toBe(false)
  })

  it("OAuthStartRequest defaults both flags to false", () => {
    expect(Schema.decodeUnknownSync(OAuthStartRequest)({})).toEqual({ accept_terms: false, connect: false })
  })

  it("Job encodes with its object constant, which the constructor fills in", () => {
    const job = Job.make({
      id: "job_1",
      task: "denoise",
      model: "xiph/rnnoise",
      status: "queued",
      progress: 0,
      input: { file: "file_1", duration_seconds: 12.5 },
      options: { strength: null, output: { format: "mp3", loudness: null } },
      output: null,
      report: null,
      cost: { estimated_micros: 1300, charged_micros: null, display: "$0.0013" },
      receipt: {
        billable_seconds: 13,
        minimum_applied: false,
        unit_price_micros: 100,
        pricing_version: 1,
        charged_micros: null,
        ledger_txn_id: null
      },
      error: null,
      mode: "live",
      created_at: "2025-01-01T00:00:00.000Z",
      started_at: null,
      finished_at: null
    })
    const encoded = Schema.encodeSync(Job)(job)
    expect(encoded.object).toBe("job")
    expect(encoded.input).toEqual({ file: "file_1", duration_seconds: 12.5 })
    expect(accepts(Job, { ...encoded, object: "file" })).toBe(false)
    expect(accepts(Job, { ...encoded, progress: 1.5 })).toBe(false)
    const page = Schema.encodeSync(JobPage)(new JobPage({ data: [job], next_cursor: null }))
    expect(page.data[0].id).toBe("job_1")
  })
})
