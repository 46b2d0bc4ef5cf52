/**
 * What the edge needs to know about an endpoint, declared on it, one annotation per fact
 * (docs/architecture.md, "Declaring a new endpoint"):
 *
 *   HttpApiEndpoint.post("createFile", "/v1/files")
 *     .annotate(Idempotent, true)            // accepts Idempotency-Key
 *     .annotate(RequiredScopes, ["files:write"]) // checked before anything runs or is replayed
 *   HttpApiEndpoint.get("health", "/v1/health").annotate(RateBucket, "unlimited")
 *   HttpApiEndpoint.post("createWebhookEndpoint", …).annotate(NoStore, true) // its answer carries a secret
 *
 * Who the caller is comes from the group's middleware (declare.ts): an API key, a
 * dashboard session, or nobody. Everything else has a default: the bucket follows the
 * caller (per key or per account: `reads` for GET, `creates` otherwise; per IP: `public`).
 * A group's annotation applies to all its endpoints; an endpoint's overrides it.
 */
import { Context } from "effect"
import type { Scope } from "../../../core/domain/enums.js"

/** The POST creates or changes something: a retry with the same `Idempotency-Key` is replayed. */
export class Idempotent extends Context.Tag("hush/edge/Idempotent")<Idempotent, boolean>() {}

/**
 * Which token bucket a request draws on. `unlimited`: none (health, metrics, a payment
 * provider's signed webhook). `public`: 120 a minute per IP, whoever calls.
 */
export type BucketName = "creates" | "reads" | "public" | "unlimited"
export class RateBucket extends Context.Tag("hush/edge/RateBucket")<RateBucket, BucketName>() {}

/** The key must hold at least one of these scopes (`403 insufficient_scope`), checked before the handler or a replay; the reference names them. */
export class RequiredScopes extends Context.Tag("hush/edge/RequiredScopes")<RequiredScopes, ReadonlyArray<Scope>>() {}

/**
 * Every answer of the endpoint, a problem or a replay included, carries `Cache-Control:
 * no-store` (decisions.md, Requests and errors): a session's answers (groups made with
 * `withSession` get it) and any answer that carries a secret. Every endpoint under
 * `/v1/auth/` or `/v1/dashboard/` must declare it: edge/facts.ts refuses to start otherwise.
 */
export class NoStore extends Context.Tag("hush/edge/NoStore")<NoStore, boolean>() {}
