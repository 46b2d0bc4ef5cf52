/**
 * Users and what they may do (decisions.md, Dashboard details): addresses compare
 * case-insensitively after trimming; live keys and purchases need a verified address; live
 * keys also need the terms accepted; at most `maxActiveKeys` unrevoked keys.
 */
import { Either } from "effect"
import type { Mode } from "../domain/enums.js"
import type { AccountRecord, KeyRecord } from "../domain/records.js"
import type { UserRecord } from "../domain/users.js"
import { excerpt, Forbidden, InvalidRequest } from "../errors.js"

export const normalizeEmail = (email: string): string => email.trim()

/** The shape every stored address has (the database checks the same): something@something, 3 to 254 characters. */
export const checkEmail = (email: string): Either.Either<string, InvalidRequest> => {
  const normalized = normalizeEmail(email)
  return normalized.length >= 3 && normalized.length <= 254 && /^[^\s@]+@[^\s@]+$/.test(normalized)
    ? Either.right(normalized)
    : Either.left(new InvalidRequest({ status: 422, field: "email", detail: `'${excerpt(email)}' is not an e-mail address` }))
}

/** What two addresses are compared by. */
export const emailKey = (email: string): string => email.trim().toLowerCase()

export const isVerified = (user: UserRecord): boolean => user.emailVerifiedAt !== null

/** The rule of live keys and checkout: a verified address. */
export const requireVerifiedEmail = (user: UserRecord): Either.Either<void, Forbidden> =>
  isVerified(user)
    ? Either.void
    : Either.left(new Forbidden({ detail: `verify the e-mail address ${excerpt(user.email)} first (see the link we sent, or POST /v1/auth/email/resend)` }))

export const hasAcceptedTerms = (account: AccountRecord): boolean => account.termsVersion !== ""

/** Test keys right after signup; live keys once the address is verified and the terms accepted. */
export const checkCanCreateKey = (mode: Mode, user: UserRecord, account: AccountRecord): Either.Either<void, Forbidden> => {
  if (mode === "test") return Either.void
  if (!hasAcceptedTerms(account)) return Either.left(new Forbidden({ detail: "accept the terms of service before creating live keys" }))
  return requireVerifiedEmail(user)
}

export const checkKeyLimit = (keys: ReadonlyArray<KeyRecord>, maxActive: number): Either.Either<void, Forbidden> => {
  const active = keys.filter((key) => key.revokedAt === null).length
  return active < maxActive
    ? Either.void
    : Either.left(new Forbidden({ detail: `an account has at most ${maxActive} active keys; revoke one first` }))
}
