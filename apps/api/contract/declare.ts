/**
 * How a group says who calls it; each also puts the group behind the edge's rules
 * (middleware.ts), in the right order. Every group of HushApi is made with one of these:
 * edge/facts.ts refuses to start otherwise.
 *
 *   withApiKey(HttpApiGroup.make("files").add(…))      // Authorization: Bearer <API key>
 *   withSession(HttpApiGroup.make("dashboard").add(…)) // the dashboard's session cookie (answers never stored)
 *   withoutCaller(HttpApiGroup.make("public").add(…))  // nobody: limited per IP
 *
 * Middleware added to a group later runs earlier: the caller is known before EdgeRules runs.
 */
import type { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { DashboardSession } from "./middleware.js"
import { NoStore } from "./annotations.js"
import { Authentication, EdgeRules } from "./middleware.js"

type Group<Id extends string, Endpoints extends HttpApiEndpoint.HttpApiEndpoint.Any, E, R> = HttpApiGroup.HttpApiGroup<Id, Endpoints, E, R, false>

export const withApiKey = <Id extends string, Endpoints extends HttpApiEndpoint.HttpApiEndpoint.Any, E, R>(group: Group<Id, Endpoints, E, R>) =>
  group.middleware(EdgeRules).middleware(Authentication)

export const withSession = <Id extends string, Endpoints extends HttpApiEndpoint.HttpApiEndpoint.Any, E, R>(group: Group<Id, Endpoints, E, R>) =>
  group.annotate(NoStore, true).middleware(EdgeRules).middleware(DashboardSession)

export const withoutCaller = <Id extends string, Endpoints extends HttpApiEndpoint.HttpApiEndpoint.Any, E, R>(group: Group<Id, Endpoints, E, R>) =>
  group.middleware(EdgeRules)
