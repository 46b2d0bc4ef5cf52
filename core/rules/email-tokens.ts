/** E-mail link tokens: single use, valid for a while (24 hours to verify, 1 hour to reset). */
import { Either, Option } from "effect"
import type { EmailTokenRecord } from "../domain/users.js"
import { InvalidRequest } from "../errors.js"

/** Every unusable link reads the same: used, expired, unknown or meant for another address. */
export const unusableLink = () =>
  new InvalidRequest({ status: 422, field: "token", detail: "this link has been used, has expired or is unknown; ask for a new one" })

/**
 * The token as `EmailTokenRepo.use` returned it (its state before this use): usable when it
 * existed, was unused and had not expired. Every other case reads the same.
 */
export const checkTokenUse = (found: Option.Option<EmailTokenRecord>, now: number): Either.Either<EmailTokenRecord, InvalidRequest> =>
  Option.isSome(found) && found.value.usedAt === null && now < found.value.expiresAt
    ? Either.right(found.value)
    : Either.left(unusableLink())
