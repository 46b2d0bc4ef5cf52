/**
 * The edge's facts about every endpoint, read once from the HttpApi's reflection: who calls
 * it (the group's middleware), its rate bucket, whether it is idempotent, the scopes it needs.
 * Looked up after routing by the route's own method and path template (no second matching).
 */
import { HttpApi, HttpApiEndpoint } from "@effect/platform"
import { Context } from "effect"
import type { Scope } from "../../../../core/domain/enums.js"
import { HushApi } from "../../contract/definition.js"
import { DashboardSession } from "../../contract/middleware.js"
import { type BucketName, Idempotent, NoStore, RateBucket, RequiredScopes } from "../../contract/annotations.js"
import { Authentication, EdgeRules } from "../../contract/middleware.js"

export type CallerKind = "key" | "session" | "none"

export interface EndpointFacts {
  /** The HttpApi name, e.g. `createFile`. */
  readonly name: string
  readonly method: string
  /** As declared: `/v1/files/:file_id`. */
  readonly path: string
  readonly caller: CallerKind
  readonly bucket: BucketName
  readonly idempotent: boolean
  readonly scopes: ReadonlyArray<Scope>
  /** Decoded from a JSON object body by HttpApi (else a body is optional: absent, `null` or an object). */
  readonly hasPayload: boolean
  /** Every answer carries `Cache-Control: no-store` (annotations.ts, `NoStore`). */
  readonly noStore: boolean
}

/** decisions.md, Requests and errors: every answer under these paths is `no-store`. */
export const NO_STORE_PREFIXES: ReadonlyArray<string> = ["/v1/auth/", "/v1/dashboard/"]

export const isNoStorePath = (pathname: string) => NO_STORE_PREFIXES.some((prefix) => pathname.startsWith(prefix))

const routeKey = (method: string, path: string) => `${method} ${path}`

const build = () => {
  const byRoute = new Map<string, EndpointFacts>()
  const byName = new Map<string, EndpointFacts>()
  HttpApi.reflect(HushApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group, mergedAnnotations, middleware: used }) => {
      const middleware = used as ReadonlySet<unknown>
      if (!middleware.has(EdgeRules)) {
        throw new Error(`endpoint ${group.identifier}.${endpoint.name} is not behind the edge: make its group with apps/api/contract/declare.ts`)
      }
      const caller: CallerKind = middleware.has(Authentication) ? "key" : middleware.has(DashboardSession) ? "session" : "none"
      const declared = Context.getOption(mergedAnnotations, RateBucket)
      const bucket: BucketName = declared._tag === "Some"
        ? declared.value
        : caller === "none" ? "public" : endpoint.method === "GET" ? "reads" : "creates"
      const facts: EndpointFacts = {
        name: endpoint.name,
        method: endpoint.method,
        path: endpoint.path,
        caller,
        bucket,
        idempotent: Context.getOrElse(mergedAnnotations, Idempotent, () => false),
        scopes: Context.getOrElse(mergedAnnotations, RequiredScopes, () => []),
        hasPayload: (endpoint as unknown as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps).payloadSchema._tag === "Some" && endpoint.method !== "GET",
        noStore: Context.getOrElse(mergedAnnotations, NoStore, () => false)
      }
      if (!facts.noStore && isNoStorePath(endpoint.path)) {
        throw new Error(`endpoint ${group.identifier}.${endpoint.name} answers under ${endpoint.path}: annotate it (or its group) with NoStore`)
      }
      byRoute.set(routeKey(endpoint.method, endpoint.path), facts)
      byName.set(endpoint.name, facts)
    }
  })
  return { byRoute, byName, all: [...byName.values()] }
}

let table: ReturnType<typeof build> | undefined
/** Built on first use, when the first request or the OpenAPI description asks. */
const facts = () => (table ??= build())

export const factsOfRoute = (method: string, path: string): EndpointFacts | undefined => facts().byRoute.get(routeKey(method, path))
export const factsOfEndpoint = (name: string): EndpointFacts | undefined => facts().byName.get(name)

/**
 * Whether a request's answer is `no-store`: its endpoint's declaration, found by the route the
 * router matched (or would have); a request no endpoint matched (404, 405) by its path.
 */
export const answersNoStore = (method: string, route: string, pathname: string): boolean =>
  factsOfRoute(method, route)?.noStore ?? isNoStorePath(pathname)
export const allEndpointFacts = (): ReadonlyArray<EndpointFacts> => facts().all

/** A request URL's path: what comes before its query string. */
export const pathOf = (url: string) => {
  const query = url.indexOf("?")
  return query === -1 ? url : url.slice(0, query)
}
