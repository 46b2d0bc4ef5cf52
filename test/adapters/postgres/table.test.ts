/**
 * Tables described once (adapters/postgres/table.ts, rows.ts), without a database: the texts
 * derived from a description, the record ↔ row round trip of every core table, sub-records
 * that are absent, integers refused rather than rounded, and statements' parameters numbered by
 * name. The same tables against a real server: test/adapters/postgres/repositories.test.ts.
 */
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import {
  accounts, apiKeys, creditHolds, creditLots, files, idempotencyKeys, jobs, ledgerEntries
} from "../../../adapters/postgres/rows.js"
import { group, int, json, orNull, statement, table, type Table, text } from "../../../adapters/postgres/table.js"
import { AudioReportRecord } from "../../../core/domain/audio-report.js"
import { HoldDraw } from "../../../core/domain/records.js"
import {
  fileError, jobError, jobOutput, makeAccount, makeFile, makeHold, makeIdempotency, makeJob, makeKey, makeLedgerEntry,
  makeLot, multipart
} from "../../contracts/fixtures.js"

/** The row node-postgres would hand back for a record's parameters: bigints as text, jsonb parsed. */
const rowOf = <A>(t: Table<A>, record: A): Record<string, unknown> => {
  const params = t.params(record)
  return Object.fromEntries(t.columnNames.map((c, i) => {
    const value = params[i]
    if (typeof value === "number" && Number.isInteger(value)) return [c, String(value)]
    if (typeof value === "string" && t.values.split(", ")[i]!.endsWith("::jsonb")) return [c, JSON.parse(value)]
    return [c, value]
  }))
}

describe("a table's description", () => {
  it("gives every column once, an INSERT and an UPDATE whose placeholders follow the parameters", () => {
    expect(jobs.columnNames).toHaveLength(new Set(jobs.columnNames).size)
    expect(jobs.columnNames).toHaveLength(jobs.width)
    expect(jobs.columnNames).toEqual(expect.arrayContaining(["id", "option_strength", "billable_seconds", "output_storage_key", "error_code"]))
    expect(jobs.insert).toBe(`INSERT INTO jobs (${jobs.columnNames.join(", ")}) VALUES (${jobs.columnNames.map((_, i) => `$${i + 1}`).join(", ")})`)
    const sets = jobs.columnNames.slice(1).map((c, i) => `${c} = $${i + 2}`).join(", ")
    expect(jobs.update).toBe(`UPDATE jobs SET ${sets} WHERE id = $1 RETURNING 1`)
    // jsonb parameters carry their cast wherever they are placed
    expect(apiKeys.update).toContain("scopes = $8::jsonb")
    expect(idempotencyKeys.update).toMatch(/ WHERE account_id = \$1 AND mode = \$2 AND key = \$3 RETURNING 1$/)
    expect(idempotencyKeys.setExcluded).not.toContain("account_id")
    expect(idempotencyKeys.setExcluded).toContain("response_headers = EXCLUDED.response_headers")
  })

  it("maps every core table's record to its parameters and its row back to the same record", () => {
    const cases: Array<[Table<any>, unknown]> = [
      [accounts, makeAccount()],
      [apiKeys, makeKey({ lastUsedAt: 1_700_000_000_123 })],
      [files, makeFile()],
      [files, makeFile({ error: fileError(), multipart: multipart(), durationSeconds: 2.5 })],
      [jobs, makeJob()],
      [jobs, makeJob({ output: jobOutput(), chargedMicros: 300, keyId: null })],
      // a group inside a group: the output's report
      [jobs, makeJob({ output: jobOutput({ report: new AudioReportRecord({ inputLoudnessLufs: -23.4, outputLoudnessLufs: -16, outputTruePeakDbtp: -1.3, noiseReductionDb: 31.2 }) }) })],
      [jobs, makeJob({ error: jobError() })],
      [creditLots, makeLot()],
      [creditHolds, makeHold({ draws: [new HoldDraw({ lotId: "lot_a", micros: 5 }), new HoldDraw({ lotId: "lot_b", micros: 7 })] })],
      [ledgerEntries, makeLedgerEntry()],
      [idempotencyKeys, makeIdempotency()],
      [idempotencyKeys, makeIdempotency({ state: "done", responseStatus: 201, responseBody: "{}", responseHeaders: { "x-a": "1" } })]
    ]
    for (const [t, record] of cases) {
      const back = t.decode(rowOf(t, record))
      expect(back, t.name).toEqual(record)
      expect(back.constructor, t.name).toBe((record as object).constructor)
    }
  })

  it("reads a sub-record as null while its column is NULL, and writes NULL for each of its columns", () => {
    const job = makeJob({ output: null, error: null })
    const row = rowOf(jobs, job)
    for (const c of ["output_format", "output_bitrate_kbps", "output_size_bytes", "output_storage_key", "output_deleted_at", "error_code", "error_message"]) {
      expect(row[c], c).toBeNull()
    }
    expect(jobs.decode(row).output).toBeNull()
    expect(jobs.decode({ ...row, output_storage_key: "out/a", output_format: "mp3", output_bitrate_kbps: 128, output_size_bytes: "9" }).output)
      .toEqual(jobOutput({ storageKey: "out/a", format: "mp3", bitrateKbps: 128, sizeBytes: 9, deletedAt: null }))
  })

  it("refuses an integer column's value that is not a safe integer, naming the column", () => {
    const row = rowOf(jobs, makeJob())
    expect(() => jobs.decode({ ...row, estimated_micros: "9007199254740993" })).toThrow(/estimated_micros: expected a safe integer/)
    expect(() => jobs.decode({ ...row, attempts: "1.5" })).toThrow(/attempts/)
  })

  it("reads a joined table's columns under its alias", () => {
    const account = makeAccount()
    const joined = accounts.joined("a")
    expect(joined.columns).toBe(accounts.columnNames.map((c) => `a.${c} AS a_${c}`).join(", "))
    const row = Object.fromEntries(Object.entries(rowOf(accounts, account)).map(([c, v]) => [`a_${c}`, v]))
    expect(joined.decode(row)).toEqual(account)
    expect(apiKeys.columnsOf("k")).toBe(apiKeys.columnNames.map((c) => `k.${c}`).join(", "))
  })

  it("numbers a multi-row INSERT's parameters record after record", () => {
    const t = table("pairs", class Pair extends Schema.Class<Pair>("Pair")({ id: Schema.String, n: Schema.Int }) {}, {
      id: text("id"),
      n: int("n")
    })
    expect(t.insertMany(3)).toBe("INSERT INTO pairs (id, n) VALUES ($1, $2), ($3, $4), ($5, $6)")
    expect(t.insertMany(3)).toBe(t.insertMany(3))
  })

  it("refuses a description that repeats a column or lacks its key, and a placeholder of no column", () => {
    class Pair extends Schema.Class<Pair>("Pair")({ id: Schema.String, n: Schema.Int }) {}
    expect(() => table("pairs", Pair, { id: text("id"), n: int("id") })).toThrow(/column id is described twice/)
    expect(() => table("pairs", Pair, { id: text("id"), n: int("n") }, { key: ["pair_id"] })).toThrow(/key column pair_id/)
    expect(() => jobs.placeholder("no_such_column")).toThrow(/no column no_such_column/)
  })

  it("keeps a nullable jsonb group member and a nested record's class", () => {
    class Inner extends Schema.Class<Inner>("Inner")({ tags: Schema.NullOr(Schema.Array(Schema.String)), size: Schema.Int }) {}
    class Outer extends Schema.Class<Outer>("Outer")({ id: Schema.String, inner: Schema.NullOr(Inner) }) {}
    const t = table("outers", Outer, {
      id: text("id"),
      inner: group(Inner, { tags: orNull(json("inner_tags")), size: int("inner_size") }, "inner_size")
    })
    for (const record of [new Outer({ id: "a", inner: null }), new Outer({ id: "b", inner: new Inner({ tags: ["x"], size: 3 }) })]) {
      expect(t.decode(rowOf(t, record))).toEqual(record)
    }
    expect(t.params(new Outer({ id: "b", inner: new Inner({ tags: null, size: 3 }) }))).toEqual(["b", null, 3])
    expect(t.values).toBe("$1, $2::jsonb, $3")
  })
})

describe("a statement's parameters", () => {
  it("are numbered in the order named, as often as each is placed", () => {
    expect(statement(["accountId", "mode", "since"], (p) =>
      `WHERE account_id = ${p.accountId} AND mode = ${p.mode} AND at >= ${p.since} OR account_id = ${p.accountId}`))
      .toBe("WHERE account_id = $1 AND mode = $2 AND at >= $3 OR account_id = $1")
  })

  it("follow a table's record when placed after it", () => {
    expect(statement(["event"], (p) => `${jobs.placeholder("mode")} ? ${p.event}`, jobs)).toBe(`$3 ? $${jobs.width + 1}`)
  })
})
