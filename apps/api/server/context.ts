import { Context } from "effect"

/** What the health endpoint reports about this deployment. */
export class ServerInfo extends Context.Tag("hush/api/ServerInfo")<ServerInfo, {
  readonly version: string
  readonly env: string
}>() {}
