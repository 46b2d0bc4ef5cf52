import { Schema } from "effect"

export const Mode = Schema.Literal("live", "test")
export type Mode = typeof Mode.Type

export const Scope = Schema.Literal("files:write", "jobs:write", "jobs:read", "credits:read", "webhooks:write")
export type Scope = typeof Scope.Type
export const ALL_SCOPES: ReadonlyArray<Scope> = ["files:write", "jobs:write", "jobs:read", "credits:read", "webhooks:write"]

export const AccountStatus = Schema.Literal("active", "suspended", "frozen")
export type AccountStatus = typeof AccountStatus.Type

export const FileStatus = Schema.Literal("uploading", "validating", "ready", "rejected")
export type FileStatus = typeof FileStatus.Type

export const JobStatus = Schema.Literal("queued", "processing", "succeeded", "failed", "canceled")
export type JobStatus = typeof JobStatus.Type

export const LedgerKind = Schema.Literal(
  "purchase", "grant", "hold", "capture", "release", "expiry", "refund", "adjustment"
)
export type LedgerKind = typeof LedgerKind.Type

export const LotSource = Schema.Literal("purchase", "grant")
export type LotSource = typeof LotSource.Type

export const ModelStatus = Schema.Literal("live", "retired")
export type ModelStatus = typeof ModelStatus.Type

export const Task = Schema.Literal("denoise")
export type Task = typeof Task.Type

/** Error codes a failed job may carry (spec: JobError). */
export const JobErrorCode = Schema.Literal("internal_error", "provider_error")
export type JobErrorCode = typeof JobErrorCode.Type

/** The events outbound webhooks carry (decisions.md, Events). */
export const WebhookEventType = Schema.Literal("job.succeeded", "job.failed", "job.canceled", "file.ready", "file.rejected")
export type WebhookEventType = typeof WebhookEventType.Type
export const WEBHOOK_EVENT_TYPES: ReadonlyArray<WebhookEventType> = WebhookEventType.literals

/** What a delivery carries: a subscribed event, or `webhook.test`, which any endpoint gets when asked (never subscribed to). */
export const DeliveryEventType = Schema.Literal(...WebhookEventType.literals, "webhook.test")
export type DeliveryEventType = typeof DeliveryEventType.Type

export const WebhookEndpointStatus = Schema.Literal("enabled", "disabled")
export type WebhookEndpointStatus = typeof WebhookEndpointStatus.Type

export const WebhookDeliveryStatus = Schema.Literal("pending", "succeeded", "failed")
export type WebhookDeliveryStatus = typeof WebhookDeliveryStatus.Type
