/**
 * Ids derived from a create's `Idempotency-Key`: from the account, the mode, the kind and the
 * key, keyed with the deployment's secret so that no one predicts them. A retry whose first
 * attempt committed but never got its answer (the connection to the database was lost after
 * COMMIT: the client saw 503 and the edge kept no record of it) makes the same id, and the
 * insert under it finds that first attempt's record instead of making a second one
 * (decisions.md, Faults).
 */
import { Data, Effect } from "effect"
import type { Actor } from "../domain/caller.js"
import { DeploymentSecrets } from "../domain/deployment.js"
import { Digests } from "../ports/digests.js"
import { encodeBase32LowerCaseNoPadding } from "../rules/base32.js"
import { utf8 } from "../rules/secrets.js"

export const idOfIdempotencyKey = (kind: "job" | "file", caller: Pick<Actor, "accountId" | "mode">, idempotencyKey: string) =>
  Effect.map(Effect.zip(DeploymentSecrets, Digests), ([secrets, digests]) =>
    `${kind}_${encodeBase32LowerCaseNoPadding(digests.hmacSha256(secrets.cursorKey, utf8(
      `hush ${kind} id v1\n${caller.accountId}\n${caller.mode}\n${idempotencyKey}`
    )).subarray(0, 15))}`)

/** A create's derived id is taken: an earlier attempt with its Idempotency-Key stored a record under it. */
export class IdTaken extends Data.TaggedError("IdTaken") {}

/** A create under a random id: its id is never taken, so IdTaken there is a defect. */
export const dieIfIdTaken = <A, E, R>(create: Effect.Effect<A, E, R>) =>
  Effect.catchIf(create, (e): e is Extract<E, IdTaken> => e instanceof IdTaken, (e) => Effect.die(e)) as Effect.Effect<A, Exclude<E, IdTaken>, R>
