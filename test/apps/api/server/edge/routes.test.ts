/**
 * apps/api/server/edge/routes.ts: the edge names a request by the router's own routes and
 * matcher, strict as the router is, and lists a path's methods for 405's `Allow`.
 */
import { HttpRouter, HttpServerResponse } from "@effect/platform"
import { describe, expect, it } from "vitest"
import { makeRouteTable, UNMATCHED } from "../../../../../apps/api/server/edge/routes.js"

const ok = HttpServerResponse.empty()
const router = HttpRouter.empty.pipe(
  HttpRouter.get("/v1/jobs/:job_id", ok),
  HttpRouter.del("/v1/jobs/:job_id", ok),
  HttpRouter.get("/v1/jobs/summary", ok),
  HttpRouter.post("/v1/jobs", ok),
  HttpRouter.all("/storage/*", ok)
)
const table = makeRouteTable(router)
const routeOf = (method: string, url: string) => table.routeOf({ method, url })

describe("the edge's route table", () => {
  it("names a request by its template, the static route before a parameter, query strings aside", () => {
    expect(routeOf("GET", "/v1/jobs/job_abc")).toBe("/v1/jobs/:job_id")
    expect(routeOf("GET", "/v1/jobs/summary?x=1")).toBe("/v1/jobs/summary")
    expect(routeOf("POST", "/v1/jobs?dry=1")).toBe("/v1/jobs")
    expect(routeOf("PUT", "/storage/inputs/a/b")).toBe("/storage/*")
    expect(routeOf("HEAD", "/v1/jobs/job_abc")).toBe("/v1/jobs/:job_id")
  })

  it("is strict as the router: no trailing slash, no empty segment, case counts; else `unmatched`", () => {
    expect(routeOf("GET", "/v1/jobs/job_abc/")).toBe(UNMATCHED)
    expect(routeOf("GET", "/v1//jobs/job_abc")).toBe(UNMATCHED)
    expect(routeOf("GET", "/V1/jobs/job_abc")).toBe(UNMATCHED)
    expect(routeOf("GET", "/v1/files")).toBe(UNMATCHED)
  })

  it("names a method the path has no route for (a 405) by the path's route", () => {
    expect(routeOf("PATCH", "/v1/jobs/job_abc")).toBe("/v1/jobs/:job_id")
    expect(routeOf("GET", "/v1/jobs")).toBe("/v1/jobs")
  })

  it("lists the methods a path has (405's Allow), none for an unknown path", () => {
    expect(table.methodsOf("/v1/jobs/job_abc")).toEqual(["GET", "DELETE"])
    expect(table.methodsOf("/v1/jobs")).toEqual(["POST"])
    expect(table.methodsOf("/storage/x")).toEqual(["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
    expect(table.methodsOf("/v1/nothing")).toEqual([])
  })

  it("names one request once: the span's name and the answer's record read the same match", () => {
    const request = { method: "GET", url: "/v1/jobs/job_abc" }
    expect(table.routeOf(request)).toBe("/v1/jobs/:job_id")
    // a request object is matched once: changing it afterwards does not move its route
    ;(request as { url: string }).url = "/v1/jobs"
    expect(table.routeOf(request)).toBe("/v1/jobs/:job_id")
  })
})
