/**
 * The app's one route table: the routes of the router the app serves (`HttpApiBuilder.Router`:
 * the HttpApi's endpoints, storage, pages, the reference, the dashboard), matched by the
 * router's own matcher (`find-my-way-ts`, which `HttpRouter.toHttpApp` builds) under the same
 * configuration (`ROUTER_CONFIG`). An endpoint's route is the router's match itself
 * (`HttpRouter.RouteContext`, read in edge/rules.ts); a request that reached no endpoint (a
 * page, a storage URL, a 404, a 405) is named from here, and 405's `Allow` lists the methods
 * this table has for the path. No template list of its own: a route added to the router is
 * here too.
 */
import { HttpApiBuilder, type HttpRouter } from "@effect/platform"
import { Chunk, Context, Effect, Layer } from "effect"
import * as FindMyWay from "find-my-way-ts"

/**
 * Strict (decisions.md, Requests and errors): no trailing-slash or duplicate-slash spelling of
 * a route, case counts; a long parameter is matched (an id's own rules refuse it, a 404 of
 * that id, not an unknown route).
 */
export const ROUTER_CONFIG: FindMyWay.RouterConfig = {
  ignoreTrailingSlash: false, ignoreDuplicateSlashes: false, caseSensitive: true, maxParamLength: 16 * 1024
}

/** What `Allow` may list: HEAD goes with GET, as the router serves it. */
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const

/** A request no route matched is named `unmatched` in metrics and logs: never its raw path. */
export const UNMATCHED = "unmatched"

export interface RouteTable {
  /**
   * The template a request matches (`/v1/jobs/:job_id`), computed once per request object; a
   * method the path has no route for (a 405) is named by the path's route for another method.
   */
  readonly routeOf: (request: { readonly method: string; readonly url: string }) => string
  /** The methods a path has a route for (405's `Allow`); empty when it has none. */
  readonly methodsOf: (url: string) => ReadonlyArray<string>
}

export const makeRouteTable = (router: HttpRouter.HttpRouter<unknown, unknown>): RouteTable => {
  const matcher = FindMyWay.make<string>(ROUTER_CONFIG)
  for (const route of Chunk.toReadonlyArray(router.routes)) {
    if (route.method === "*") matcher.all(route.path, route.path)
    else matcher.on(route.method, route.path, route.path)
  }
  const find = (method: string, url: string): string | undefined =>
    matcher.find(method, url)?.handler ?? (method === "HEAD" ? matcher.find("GET", url)?.handler : undefined)
  const anyMethod = (url: string): string | undefined => {
    for (const method of METHODS) {
      const route = matcher.find(method, url)?.handler
      if (route !== undefined) return route
    }
    return undefined
  }
  // the span is named when the request starts and the answer recorded when it ends: one match
  const byRequest = new WeakMap<object, string>()
  return {
    routeOf: (request) => {
      let route = byRequest.get(request)
      if (route === undefined) byRequest.set(request, route = find(request.method, request.url) ?? anyMethod(request.url) ?? UNMATCHED)
      return route
    },
    methodsOf: (url) => METHODS.filter((method) => matcher.find(method, url) !== undefined)
  }
}

export class Routes extends Context.Tag("hush/api/Routes")<Routes, RouteTable>() {}

/**
 * The table of the router `HttpApiBuilder.serve` serves, built on first use: the router is
 * complete once the app is built, before its first request, not when this layer is.
 */
export const layerRoutes = Layer.effect(
  Routes,
  Effect.map(HttpApiBuilder.Router, (service): RouteTable => {
    let table: RouteTable | undefined
    const current = () => (table ??= makeRouteTable(Effect.runSync(service.router)))
    return {
      routeOf: (request) => current().routeOf(request),
      methodsOf: (url) => current().methodsOf(url)
    }
  })
).pipe(Layer.provide(HttpApiBuilder.Router.Live))
