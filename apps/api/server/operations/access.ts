/** Who may read `/metrics`: the bearer of METRICS_TOKEN, compared in constant time. */
import { Context, Option, Redacted } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"

export interface MetricsAccessOptions {
  /** None: metrics are off (404). */
  readonly token: Option.Option<Redacted.Redacted<string>>
  /** Served on METRICS_PORT instead: the public port answers 404. */
  readonly ownPort: boolean
}
export class MetricsAccess extends Context.Tag("hush/api/MetricsAccess")<MetricsAccess, MetricsAccessOptions>() {}

const digest = (text: string) => createHash("sha256").update(text).digest()

/** `Bearer <token>` with exactly the configured token. */
export const bearerMatches = (authorization: string | undefined, token: Redacted.Redacted<string>) => {
  const match = /^Bearer +(\S+) *$/i.exec(authorization ?? "")
  return match !== null && timingSafeEqual(digest(match[1]!), digest(Redacted.value(token)))
}
