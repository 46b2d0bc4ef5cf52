import { Context, FiberRef, Option } from "effect"
import type { Caller } from "../../core/services/caller.js"

/** What the health endpoint reports about this deployment. */
export class ServerInfo extends Context.Tag("hush/api/ServerInfo")<ServerInfo, {
  readonly version: string
  readonly env: string
}>() {}

/**
 * The caller the edge already authenticated for this request (idempotent POSTs), so the
 * Authentication middleware does not look the key up a second time.
 */
export const EdgeCaller: FiberRef.FiberRef<Option.Option<Caller>> = FiberRef.unsafeMake(Option.none<Caller>())
