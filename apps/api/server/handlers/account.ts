import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { MeOut } from "../../../../core/schema/index.js"
import { CurrentCaller } from "../../../../core/domain/caller.js"
import { getCredits, getMe } from "../../../../core/services/credits.js"
import { presentCredits } from "../../../../core/services/present.js"
import { HushApi } from "../../contract/definition.js"

export const AccountHandlers = HttpApiBuilder.group(HushApi, "account", (handlers) =>
  Effect.succeed(
    handlers
      .handle("getCredits", () => Effect.flatMap(CurrentCaller, getCredits).pipe(Effect.map(presentCredits)))
      .handle("getMe", () =>
        Effect.gen(function*() {
          const me = yield* Effect.flatMap(CurrentCaller, getMe)
          return new MeOut({
            account_id: me.caller.accountId,
            key_id: me.caller.keyId,
            mode: me.caller.mode,
            scopes: [...me.caller.scopes],
            balance: me.balance === null ? null : presentCredits(me.balance)
          })
        }))
  ))
