/**
 * The e-mailed links of self-serve accounts: verification (signup, resend) and password reset
 * (forgot, reset). Tokens are 256-bit secrets, stored hashed, single use, valid 24 hours
 * (verify) or 1 hour (reset); at most `mailsPerHour` of each kind per user and hour.
 */
import { Clock, Effect, Either, Option } from "effect"
import { AccountSettingsConfig } from "../domain/account-settings.js"
import { type EmailTokenPurpose, EmailTokenRecord, UserRecord } from "../domain/users.js"
import { excerpt, InvalidRequest, RateLimited, ServiceUnavailable } from "../errors.js"
import { IdGenerator } from "../ports/ids.js"
import { Mailer } from "../ports/mailer.js"
import { PasswordHasher } from "../ports/password-hasher.js"
import { transactionally } from "../ports/transactor.js"
import { EmailTokenRepo, UserRepo } from "../ports/users.js"
import { Digests } from "../ports/digests.js"
import { checkTokenUse, unusableLink } from "../rules/email-tokens.js"
import { isWellFormedSecret, sha256Hex } from "../rules/secrets.js"
import { emailKey, isVerified } from "../rules/users.js"
import { HOUR } from "../time.js"
import { passwordChangedMail, resetMail, sendQuietly, verificationMail } from "./mail.js"
import { endUserSessions } from "./sessions.js"

const PAGES: Record<EmailTokenPurpose, string> = { verify_email: "verify-email", reset_password: "reset-password" }

/** Seconds until another mail of this kind may go to the user; 0 when one may go now. */
const mailWait = (user: UserRecord, purpose: EmailTokenPurpose) =>
  Effect.gen(function*() {
    const settings = yield* AccountSettingsConfig
    const now = yield* Clock.currentTimeMillis
    const recent = yield* Effect.flatMap(EmailTokenRepo, (tokens) => tokens.createdSince(user.id, purpose, now - HOUR))
    if (recent.count < settings.mailsPerHour) return 0
    return Math.max(1, Math.ceil(((recent.earliest ?? now) + HOUR - now) / 1000))
  })

/** A new token of the purpose for the user's address; the link that carries it. */
const issueLink = (user: UserRecord, purpose: EmailTokenPurpose) =>
  Effect.gen(function*() {
    const settings = yield* AccountSettingsConfig
    const secret = (yield* IdGenerator).secret()
    const digests = yield* Digests
    const now = yield* Clock.currentTimeMillis
    const ttl = purpose === "verify_email" ? settings.verifyTokenTtlMs : settings.resetTokenTtlMs
    yield* Effect.flatMap(EmailTokenRepo, (tokens) =>
      tokens.insert(new EmailTokenRecord({
        hash: sha256Hex(secret, digests), userId: user.id, purpose, email: user.email, createdAt: now, expiresAt: now + ttl, usedAt: null
      })))
    return `${settings.publicBaseUrl}/${PAGES[purpose]}?token=${secret}`
  })

/** Signup: the first verification mail (a failure is logged). */
export const sendVerification = (user: UserRecord) =>
  Effect.flatMap(issueLink(user, "verify_email"), (link) => sendQuietly(verificationMail(user.email, link)))

/** `POST /v1/auth/email/resend`: a new link; at most 5 an hour (signup's counts). */
export const resendVerification = (user: UserRecord) =>
  Effect.gen(function*() {
    if (isVerified(user)) {
      return yield* new InvalidRequest({ status: 422, detail: `the address ${excerpt(user.email)} is already verified` })
    }
    const wait = yield* mailWait(user, "verify_email")
    if (wait > 0) {
      return yield* new RateLimited({ detail: `verification mails are limited to 5 an hour; retry after ${wait} s`, retryAfterSeconds: wait })
    }
    const link = yield* issueLink(user, "verify_email")
    yield* Effect.flatMap(Mailer, (mailer) => mailer.send(verificationMail(user.email, link))).pipe(
      Effect.catchAll((error) =>
        Effect.zipRight(
          Effect.logWarning(`verification mail to ${user.email} not sent: ${error.message}`),
          new ServiceUnavailable({ detail: "the mail server is unavailable; retry shortly", retryAfterSeconds: 60 })
        ))
    )
  })

/** The token's record as `use` left it, and whether this use was the one that used it (core/rules/email-tokens.ts). */
const takeToken = (token: string, purpose: EmailTokenPurpose, now: number) =>
  Effect.gen(function*() {
    const found = isWellFormedSecret(token)
      ? yield* Effect.flatMap(Effect.zip(EmailTokenRepo, Digests), ([tokens, digests]) => tokens.use(sha256Hex(token, digests), purpose, now))
      : Option.none()
    return { found, use: checkTokenUse(found, now) }
  })

/** The user a used token was for, if the address it was sent to is still theirs. */
const userOfToken = (record: EmailTokenRecord) =>
  Effect.map(Effect.flatMap(UserRepo, (users) => users.get(record.userId)), (user) =>
    Option.filter(user, (u) => emailKey(u.email) === emailKey(record.email)))

/** Uses a token once; the user it was for, or `422 invalid_request` (used, expired, unknown, or the address changed). */
const useToken = (token: string, purpose: EmailTokenPurpose) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const record = yield* (yield* takeToken(token, purpose, now)).use
    const user = yield* userOfToken(record)
    if (Option.isNone(user)) return yield* unusableLink()
    return { user: user.value, now }
  })

/**
 * `POST /v1/auth/email/verify`. A link used again is still `422`, except for its own user,
 * signed in on this request, whose address is verified (decisions.md, OAuth identities): they
 * clicked the mail twice, and the answer is that the address is confirmed.
 */
export const verifyEmail = (token: string, signedInUserId?: string | undefined) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const { found, use } = yield* takeToken(token, "verify_email", now)
    if (Either.isLeft(use)) {
      const usedBefore = Option.filter(found, (record) => record.usedAt !== null && record.userId === signedInUserId)
      const owner = Option.isSome(usedBefore) ? yield* userOfToken(usedBefore.value) : Option.none()
      if (Option.isSome(owner) && isVerified(owner.value)) return
      return yield* use.left
    }
    const user = yield* userOfToken(use.right)
    if (Option.isNone(user)) return yield* unusableLink()
    yield* transactionally(Effect.gen(function*() {
      if (!isVerified(user.value)) yield* Effect.flatMap(UserRepo, (users) => users.update(new UserRecord({ ...user.value, emailVerifiedAt: now })))
      yield* Effect.flatMap(EmailTokenRepo, (tokens) => tokens.useAll(user.value.id, "verify_email", now))
    }))
  })

/**
 * `POST /v1/auth/password/forgot`: the same answer whether or not the address exists; the
 * mail goes out off the request, so the answer's timing does not tell either.
 */
export const forgotPassword = (email: string) =>
  Effect.gen(function*() {
    const user = yield* Effect.flatMap(UserRepo, (users) => users.findByEmail(email))
    if (Option.isNone(user)) return
    if ((yield* mailWait(user.value, "reset_password")) > 0) {
      return yield* Effect.logInfo(`reset mail to ${user.value.email} not sent: 5 an hour already`)
    }
    const link = yield* issueLink(user.value, "reset_password")
    yield* Effect.forkDaemon(sendQuietly(resetMail(user.value.email, link)))
  })

/**
 * `POST /v1/auth/password/reset`: sets the password (the link proves the address, so it also
 * counts as verified), voids the user's other reset links, ends every session of the user,
 * and mails a notice.
 */
export const resetPassword = (token: string, password: string) =>
  Effect.gen(function*() {
    const { user, now } = yield* useToken(token, "reset_password")
    const passwordHash = yield* Effect.flatMap(PasswordHasher, (hasher) => hasher.hash(password))
    yield* transactionally(Effect.gen(function*() {
      yield* Effect.flatMap(UserRepo, (users) =>
        users.update(new UserRecord({ ...user, passwordHash, emailVerifiedAt: user.emailVerifiedAt ?? now })))
      yield* Effect.flatMap(EmailTokenRepo, (tokens) => tokens.useAll(user.id, "reset_password", now))
      yield* endUserSessions(user.id)
    }))
    yield* sendQuietly(passwordChangedMail(user.email))
  })
