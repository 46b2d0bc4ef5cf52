import { HttpApiBuilder } from "@effect/platform"
import { Clock, Effect, Option } from "effect"
import { findModel, ModelCatalog } from "../../../../core/domain/catalog.js"
import { excerpt, NotFound } from "../../../../core/errors.js"
import { Health, ModelList } from "../../../../core/schema/index.js"
import { presentModel } from "../../../../core/services/present.js"
import { ServerInfo } from "../context.js"
import { HushApi } from "../../contract/definition.js"
import { jsonAnswer } from "../edge/json-answer.js"
import { StatusProbe } from "../status.js"

export const PublicHandlers = HttpApiBuilder.group(HushApi, "public", (handlers) =>
  Effect.gen(function*() {
    const info = yield* ServerInfo
    const catalog = yield* ModelCatalog
    const status = yield* StatusProbe
    // the same answer to every health check: made once (the edge adds each request's own headers)
    const health = Effect.succeed((yield* jsonAnswer(HushApi, "public", "health"))(new Health({ status: "ok", version: info.version, env: info.env })))
    return handlers
      .handle("health", () => health)
      .handle("listModels", () => Effect.succeed(new ModelList({ data: catalog.models.map(presentModel) })))
      .handle("getModel", ({ path }) =>
        Option.match(findModel(catalog, `${path.provider}/${path.model}`), {
          onNone: () => Effect.fail(new NotFound({ detail: `no model '${excerpt(`${path.provider}/${path.model}`)}'; see GET /v1/models` })),
          onSome: (model) => Effect.succeed(presentModel(model))
        }))
      .handle("status", () => Effect.flatMap(Clock.currentTimeMillis, status.report))
  }))
