/**
 * The route table the edge needs before HttpApi runs: which endpoint a request is for
 * (rate bucket, body rules, idempotency), or why none is (404 vs 405).
 */
import { HttpApi } from "@effect/platform"
import { HushApi } from "../definition.js"
import { IDEMPOTENT_ENDPOINTS } from "./idempotency.js"

export type Bucket = "creates" | "reads" | "public" | "none"

export interface RouteInfo {
  readonly name: string
  readonly method: string
  readonly pattern: RegExp
  readonly bucket: Bucket
  /** Decoded from a JSON object body by HttpApi. */
  readonly hasPayload: boolean
  /** A POST that creates or changes something: accepts `Idempotency-Key`. */
  readonly idempotent: boolean
}

const PUBLIC_LIMITED = new Set(["listModels", "getModel", "status"])

const toPattern = (path: string) =>
  new RegExp(`^${path.split("/").map((s) => (s.startsWith(":") ? "[^/]+" : s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))).join("/")}$`)

const bucketOf = (group: string, name: string, method: string): Bucket => {
  if (group === "public") return PUBLIC_LIMITED.has(name) ? "public" : "none"
  if (group === "paymentWebhooks") return "none" // the provider's deliveries: signature-checked, never limited
  return method === "GET" ? "reads" : "creates"
}

export const ROUTES: ReadonlyArray<RouteInfo> = (() => {
  const routes: Array<RouteInfo> = []
  HttpApi.reflect(HushApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group }) => {
      routes.push({
        name: endpoint.name,
        method: endpoint.method,
        pattern: toPattern(endpoint.path),
        bucket: bucketOf(group.identifier, endpoint.name, endpoint.method),
        hasPayload: endpoint.payloadSchema._tag === "Some" && endpoint.method !== "GET",
        idempotent: IDEMPOTENT_ENDPOINTS.has(endpoint.name)
      })
    }
  })
  return routes
})()

export type RouteMatch =
  | { readonly _tag: "Found"; readonly route: RouteInfo }
  | { readonly _tag: "MethodNotAllowed"; readonly allow: ReadonlyArray<string> }
  | { readonly _tag: "NotFound" }

export const matchRoute = (method: string, pathname: string): RouteMatch => {
  const onPath = ROUTES.filter((r) => r.pattern.test(pathname))
  const route = onPath.find((r) => r.method === method)
  if (route !== undefined) return { _tag: "Found", route }
  if (onPath.length > 0) return { _tag: "MethodNotAllowed", allow: [...new Set(onPath.map((r) => r.method))] }
  return { _tag: "NotFound" }
}
