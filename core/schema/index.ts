/**
 * The spec's wire shapes (snake_case, as sent and received).
 *
 * Top-level resources are `Schema.Class`es; the value objects embedded in them are
 * `Schema.Struct`s, so a presenter can pass plain object literals for those. Where a class
 * holds another class (a page's `data`, `MeOut.balance`, `KeyCreateResponse.key`), the inner
 * values must be instances (`new Job(…)` / `Job.make(…)`): a plain object type-checks but
 * fails at run time.
 */
export * from "./common.js"
export * from "./job.js"
export * from "./file.js"
export * from "./model.js"
export * from "./account.js"
export * from "./dashboard.js"
export * from "./webhook.js"
