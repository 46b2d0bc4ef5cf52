/**
 * The operator's endpoints, outside /v1 and the public reference: `GET /metrics` (Prometheus
 * text, only with `Authorization: Bearer $METRICS_TOKEN`; off without a token) and
 * `GET /readyz`. No rate bucket: a scraper and a load balancer poll them.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { NotFound, RateLimited, ServiceUnavailable, Unauthorized } from "../../../../core/errors.js"
import { RateBucket } from "../annotations.js"
import { withoutCaller } from "../declare.js"

const CheckState = Schema.Literal("ok", "down")

export const Ready = Schema.Struct({
  status: Schema.Literal("ready"),
  checks: Schema.Struct({ database: CheckState, storage: CheckState, rate_limit_store: CheckState, draining: Schema.Boolean })
})

export const OperationsGroup = withoutCaller(HttpApiGroup.make("operations")
  .add(
    HttpApiEndpoint.get("metrics", "/metrics")
      .addSuccess(HttpApiSchema.Text({ contentType: "text/plain; version=0.0.4; charset=utf-8" }))
      .addError(Unauthorized)
      .addError(NotFound)
      // a wrong token draws on the caller's public bucket, so guessing is slow
      .addError(RateLimited)
  )
  .add(HttpApiEndpoint.get("readyz", "/readyz").addSuccess(Ready).addError(ServiceUnavailable))
  .annotate(RateBucket, "unlimited")
  .annotate(OpenApi.Exclude, true))
