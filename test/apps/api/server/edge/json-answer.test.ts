/**
 * Direct JSON answers (apps/api/server/edge/json-answer.ts): where the HttpApi's encoding pass would
 * give back a value's own fields, the value's JSON is sent as it is; anywhere else the value is
 * handed back to that pass.
 */
import { HttpServerResponse } from "@effect/platform"
import { Arbitrary, Effect, FastCheck as fc, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { HushApi } from "../../../../../apps/api/contract/definition.js"
import { CheckJsonAnswers, encodesAsItself, jsonAnswer } from "../../../../../apps/api/server/edge/json-answer.js"
import { CreateOut, File, Health, Job, JobPage } from "../../../../../core/schema/index.js"

const answerer = (group: string, name: string, check = false) =>
  Effect.runSync(jsonAnswer(HushApi, group, name).pipe(Effect.provideService(CheckJsonAnswers, check)))

const bodyOf = (response: HttpServerResponse.HttpServerResponse) => {
  if (response.body._tag !== "Uint8Array") throw new Error(`a ${response.body._tag} body`)
  return new TextDecoder().decode(response.body.body)
}

class Priced extends Schema.Class<Priced>("Priced")({ amount: Schema.NumberFromString }) {}
class Plain extends Schema.Class<Plain>("Plain")({ name: Schema.String, tags: Schema.Array(Schema.Literal("a", "b")) }) {}

describe("encodesAsItself", () => {
  it("the wire classes of the hot answers encode as their own fields", () => {
    for (const schema of [Job, JobPage, File, CreateOut, Health, Plain]) expect(encodesAsItself(schema.ast), String(schema)).toBe(true)
  })

  it("any other transformation, or a value JSON cannot carry, is handed to the encoding pass", () => {
    const refused = [
      Schema.NumberFromString,
      Schema.Date,
      Schema.DateFromSelf,
      Schema.Option(Schema.String),
      Schema.Trim,
      Schema.BigInt,
      Schema.BigIntFromSelf,
      Schema.Unknown,
      Priced,
      Schema.Struct({ plain: Plain, priced: Schema.NullOr(Priced) }),
      Schema.Struct({ count: Schema.optionalWith(Schema.Number, { default: () => 0 }) }),
      Schema.Array(Schema.Struct({ at: Schema.DateFromString }))
    ]
    for (const schema of refused) expect(encodesAsItself(schema.ast), String(schema)).toBe(false)
  })
})

describe("jsonAnswer", () => {
  it("the jobs, files and health endpoints answer directly, with their endpoint's status and content type", () => {
    const cases = [["jobs", "getJob", 200], ["jobs", "createDenoiseJob", 202], ["jobs", "listJobs", 200], ["jobs", "cancelJob", 200],
      ["files", "getFile", 200], ["files", "createFile", 201], ["files", "completeFile", 202], ["public", "health", 200]] as const
    for (const [group, name, status] of cases) {
      const answer = answerer(group, name)
      expect(answer.direct, `${group}.${name}`).toBe(true)
      const response = answer(new Health({ status: "ok", version: "1", env: "test" }))
      expect(HttpServerResponse.isServerResponse(response)).toBe(true)
      expect((response as HttpServerResponse.HttpServerResponse).status, `${group}.${name}`).toBe(status)
      expect((response as HttpServerResponse.HttpServerResponse).headers["content-type"]).toBe("application/json")
    }
  })

  it("an endpoint with no body is handed back to the HttpApi", () => {
    const answer = answerer("files", "deleteFile")
    expect(answer.direct).toBe(false)
    const value = { anything: 1 }
    expect(answer(value)).toBe(value)
  })

  it("an unknown endpoint is refused when the answerer is made", () => {
    expect(() => answerer("jobs", "nope")).toThrow(/no endpoint jobs\.nope/)
  })

  it("property: a job's direct answer is byte for byte the JSON of its encoding", () => {
    const answer = answerer("jobs", "getJob")
    const encode = Schema.encodeSync(Job)
    fc.assert(fc.property(Arbitrary.make(Job), (job) => {
      expect(bodyOf(answer(job) as HttpServerResponse.HttpServerResponse)).toBe(JSON.stringify(encode(job)))
    }), { numRuns: 200 })
  })

  it("property: so is a page of jobs and a file", () => {
    const page = answerer("jobs", "listJobs")
    const file = answerer("files", "getFile")
    fc.assert(fc.property(Arbitrary.make(JobPage), Arbitrary.make(File), (jobs, one) => {
      expect(bodyOf(page(jobs) as HttpServerResponse.HttpServerResponse)).toBe(JSON.stringify(Schema.encodeSync(JobPage)(jobs)))
      expect(bodyOf(file(one) as HttpServerResponse.HttpServerResponse)).toBe(JSON.stringify(Schema.encodeSync(File)(one)))
    }), { numRuns: 100 })
  })

  it("checking (the tests' servers): a stray field or an invalid value fails the answer instead of going out", () => {
    const checked = answerer("public", "health", true)
    const good = new Health({ status: "ok", version: "1", env: "test" })
    expect(bodyOf(checked(good) as HttpServerResponse.HttpServerResponse)).toBe('{"status":"ok","version":"1","env":"test"}')
    const stray = new Health({ status: "ok", version: "1", env: "test", secret: "x" } as never, { disableValidation: true })
    expect(() => checked(stray)).toThrow(/is not its encoding/)
    const invalid = new Health({ status: "ok", version: 1, env: "test" } as never, { disableValidation: true })
    expect(() => checked(invalid)).toThrow(/Expected string/)
    // unchecked, as in production, the value goes out as it is
    expect(bodyOf(answerer("public", "health")(stray) as HttpServerResponse.HttpServerResponse)).toContain("secret")
  })
})
