/**
 * Buying credit (decisions.md, Payments): the dashboard's checkout, and the provider's signed
 * events applied exactly once. Credit arrives only through an event: a paid checkout becomes
 * one `purchase` lot and entry; disputes freeze, unfreeze or suspend the account; a lost
 * dispute or a refund removes what remains of the purchase with a `refund` entry.
 */
import { Clock, Effect, Either, Option, Schema } from "effect"
import { AccountSettingsConfig } from "../domain/account-settings.js"
import { LimitsConfig } from "../domain/limits.js"
import { CheckoutRecord, type PaymentEvent, type PaymentTarget } from "../domain/payments.js"
import { AccountRecord, IdempotencyRecord } from "../domain/records.js"
import { excerpt, IdempotencyKeyReused, InvalidRequest, ProviderError } from "../errors.js"
import { formatMicros } from "../money.js"
import { IdGenerator } from "../ports/ids.js"
import { CheckoutRepo, PaymentEventRepo, PaymentProvider } from "../ports/payments.js"
import { AccountRepo, IdempotencyRepo, WalletRepo } from "../ports/repositories.js"
import { transactionally } from "../ports/transactor.js"
import { Digests } from "../ports/digests.js"
import { applyAccountEvent } from "../rules/accounts.js"
import { checkIdempotencyKey } from "../rules/idempotency.js"
import { checkCheckoutAmount, closeDispute, newlyRefunded } from "../rules/payments.js"
import { sha256Hex } from "../rules/secrets.js"
import { requireVerifiedEmail } from "../rules/users.js"
import * as Wallet from "../wallet/wallet.js"
import type { SignedIn } from "../domain/caller.js"
import { walletStep } from "./wallet.js"

const CHECKOUT_PATH = "/v1/dashboard/checkout"
const RecordedCheckout = Schema.parseJson(Schema.Struct({ checkout_id: Schema.String }))

const openCheckout = (signedIn: SignedIn, amountMicros: number) =>
  Effect.gen(function*() {
    const provider = yield* PaymentProvider
    const settings = yield* AccountSettingsConfig
    const id = (yield* IdGenerator).next("chk")
    const opened = yield* provider.createCheckout({
      checkoutId: id,
      accountId: signedIn.account.id,
      amountMicros,
      successUrl: `${settings.publicBaseUrl}/dashboard/credits?checkout=paid`,
      cancelUrl: `${settings.publicBaseUrl}/dashboard/credits?checkout=canceled`
    }).pipe(Effect.catchTag("PaymentProviderFailure", (failure) =>
      Effect.zipRight(
        Effect.logError("the payment provider refused to open a checkout", failure.message),
        Effect.fail(new ProviderError({ detail: "the payment provider could not open a checkout; try again in a moment" }))
      )))
    const checkout = new CheckoutRecord({
      id, accountId: signedIn.account.id, amountMicros, status: "open", provider: provider.name, url: opened.url,
      providerSessionId: opened.providerSessionId, paymentRef: null, refundedMicros: 0, dispute: null,
      createdAt: yield* Clock.currentTimeMillis, paidAt: null
    })
    yield* Effect.flatMap(CheckoutRepo, (checkouts) => checkouts.insert(checkout))
    return checkout
  })

/**
 * `POST /v1/dashboard/checkout`: a verified address (else `403 forbidden`), an amount of
 * decisions.md (else `422`), then a checkout at the provider. With `Idempotency-Key` a replay
 * answers the same checkout; another amount, or a first request still running, is `409`.
 */
export const startCheckout = (signedIn: SignedIn, amountMicros: number, idempotencyKey: string | undefined) =>
  Effect.gen(function*() {
    yield* requireVerifiedEmail(signedIn.user)
    yield* checkCheckoutAmount(amountMicros)
    if (idempotencyKey === undefined) return { checkout: yield* openCheckout(signedIn, amountMicros), replayed: false }
    // kept apart from the API's keys of the same account, which share the repository
    const key = `checkout:${yield* checkIdempotencyKey(idempotencyKey)}`
    const accountId = signedIn.account.id
    const repo = yield* IdempotencyRepo
    const now = yield* Clock.currentTimeMillis
    const fingerprint = sha256Hex(String(amountMicros), yield* Digests)
    const begun = yield* repo.begin(new IdempotencyRecord({
      accountId, mode: "live", key, method: "POST", path: CHECKOUT_PATH, fingerprint, state: "running",
      responseStatus: null, responseBody: null, responseHeaders: null,
      createdAt: now, expiresAt: now + (yield* LimitsConfig).idempotencyTtlMs
    }))
    if (begun._tag === "Existing") {
      const first = begun.record
      if (first.fingerprint !== fingerprint || first.path !== CHECKOUT_PATH) {
        return yield* new IdempotencyKeyReused({ detail: `Idempotency-Key '${excerpt(idempotencyKey)}' was used for another request` })
      }
      if (first.state === "running" || first.responseBody === null) {
        return yield* new IdempotencyKeyReused({ detail: `a request with Idempotency-Key '${excerpt(idempotencyKey)}' is still running; retry once it has finished` })
      }
      const recorded = yield* Schema.decode(RecordedCheckout)(first.responseBody).pipe(Effect.orDie)
      const checkout = yield* Effect.flatMap(CheckoutRepo, (c) => c.get(recorded.checkout_id)).pipe(
        Effect.flatMap(Option.match({ onNone: () => Effect.dieMessage(`recorded checkout ${recorded.checkout_id} is gone`), onSome: Effect.succeed }))
      )
      return { checkout, replayed: true }
    }
    return yield* Effect.uninterruptibleMask((restore) =>
      Effect.gen(function*() {
        const outcome = yield* Effect.either(restore(openCheckout(signedIn, amountMicros)))
        if (Either.isLeft(outcome)) {
          // only a provider failure (502) gets here: not recorded, so the retry runs afresh
          yield* repo.abandon(accountId, "live", key)
          return yield* Effect.fail(outcome.left)
        }
        const body = yield* Schema.encode(RecordedCheckout)({ checkout_id: outcome.right.id }).pipe(Effect.orDie)
        yield* repo.finish(accountId, "live", key, { status: 201, body, headers: {} })
        return { checkout: outcome.right, replayed: false }
      }).pipe(Effect.onInterrupt(() => repo.abandon(accountId, "live", key))))
  })

export type PaymentOutcome =
  | "credited" | "canceled" | "frozen" | "dispute_won" | "dispute_lost" | "refunded"
  | "duplicate" | "ignored" | "unknown_checkout" | "amount_mismatch" | "no_change"

const findTarget = (target: PaymentTarget) =>
  Effect.flatMap(CheckoutRepo, (checkouts) =>
    target.checkoutId !== null
      ? checkouts.lock(target.checkoutId)
      : target.paymentRef !== null ? checkouts.lockByPaymentRef(target.paymentRef) : Effect.succeed(Option.none()))

/**
 * Read-modify-write of the account under its wallet lock (the account's mutex, as for key
 * creation and the dashboard's account patch), so a concurrent name change cannot write back
 * a status from before a freeze.
 */
const updateAccount = (accountId: string, change: (account: AccountRecord) => AccountRecord) =>
  Effect.gen(function*() {
    yield* Effect.flatMap(WalletRepo, (wallets) => wallets.lock(accountId))
    const accounts = yield* AccountRepo
    const found = yield* accounts.get(accountId)
    if (Option.isNone(found)) return yield* Effect.dieMessage(`checkout of unknown account ${accountId}`)
    yield* accounts.update(change(found.value))
  })

const refundLot = (checkout: CheckoutRecord, amountMicros: number, reason: string) =>
  walletStep(checkout.accountId, (wallet, now, mint) =>
    Either.right(Wallet.refund(wallet, { checkoutId: checkout.id, amountMicros, reason }, now, mint)))

/** Applies one verified event, all or nothing; an event id already applied changes nothing. */
export const applyPaymentEvent = (event: PaymentEvent) =>
  transactionally(Effect.gen(function*() {
    if (event._tag === "Ignored") return "ignored" as PaymentOutcome
    const now = yield* Clock.currentTimeMillis
    const claimed = yield* Effect.flatMap(PaymentEventRepo, (events) => events.claim({ id: event.eventId, type: event._tag, receivedAt: now }))
    if (!claimed) return "duplicate"
    const checkouts = yield* CheckoutRepo
    const found = yield* findTarget(
      event._tag === "CheckoutPaid" || event._tag === "CheckoutCanceled" ? { checkoutId: event.checkoutId, paymentRef: null } : event.target
    )
    if (Option.isNone(found)) {
      yield* Effect.logWarning(`payment event ${event.eventId} (${event._tag}) names no checkout of this service; ignored`)
      return "unknown_checkout"
    }
    const checkout = found.value
    switch (event._tag) {
      case "CheckoutPaid": {
        if (checkout.status === "paid") return "no_change"
        if (event.amountMicros !== checkout.amountMicros) {
          yield* Effect.logError(
            `payment event ${event.eventId}: checkout ${checkout.id} is for ${checkout.amountMicros} micros but ${event.amountMicros} were paid; not credited`
          )
          return "amount_mismatch"
        }
        const limits = yield* LimitsConfig
        yield* walletStep(checkout.accountId, (wallet, at, mint) =>
          Either.right(Wallet.addCredit(wallet, {
            source: "purchase", amountMicros: checkout.amountMicros, lifetimeMs: limits.lotLifetimeMs,
            reason: `purchase of ${formatMicros(checkout.amountMicros)} (checkout ${checkout.id})`, checkoutId: checkout.id
          }, at, mint)))
        yield* checkouts.update(new CheckoutRecord({ ...checkout, status: "paid", paidAt: now, paymentRef: event.paymentRef }))
        yield* updateAccount(checkout.accountId, (account) => new AccountRecord({ ...account, hasPurchased: true }))
        return "credited"
      }
      case "CheckoutCanceled": {
        if (checkout.status !== "open") return "no_change"
        yield* checkouts.update(new CheckoutRecord({ ...checkout, status: "canceled" }))
        return "canceled"
      }
      case "DisputeOpened": {
        yield* checkouts.update(new CheckoutRecord({ ...checkout, dispute: "open" }))
        yield* updateAccount(checkout.accountId, (account) => applyAccountEvent(account, "dispute_opened"))
        return "frozen"
      }
      case "DisputeClosed": {
        const dispute = closeDispute(checkout.dispute, event.outcome)
        if (dispute === checkout.dispute) return "no_change"
        yield* checkouts.update(new CheckoutRecord({ ...checkout, dispute }))
        if (event.outcome === "lost") {
          yield* refundLot(checkout, checkout.amountMicros, `dispute lost on checkout ${checkout.id}`)
        }
        // the account stays frozen while another of its disputes is open
        if ((yield* checkouts.countOpenDisputes(checkout.accountId)) === 0) {
          yield* updateAccount(checkout.accountId, (account) =>
            applyAccountEvent(account, event.outcome === "lost" ? "dispute_lost" : "dispute_won"))
        }
        return event.outcome === "lost" ? "dispute_lost" : "dispute_won"
      }
      case "Refunded": {
        const amount = newlyRefunded(checkout, event.refundedTotalMicros)
        if (amount === 0) return "no_change"
        yield* checkouts.update(new CheckoutRecord({ ...checkout, refundedMicros: checkout.refundedMicros + amount }))
        yield* refundLot(checkout, amount, `refund of ${formatMicros(amount)} on checkout ${checkout.id}`)
        return "refunded"
      }
    }
  }))

/**
 * `POST /v1/webhooks/payments`: the signature is checked over the exact bytes received
 * (a bad or missing one is `400 invalid_request` and nothing changes), then the event applied.
 */
export const receivePaymentWebhook = (body: Uint8Array, signature: string | undefined) =>
  Effect.flatMap(PaymentProvider, (provider) => provider.parseEvent(body, signature)).pipe(
    Effect.mapError((invalid) => new InvalidRequest({ status: 400, field: "Stripe-Signature", detail: `webhook refused: ${invalid.reason}` })),
    Effect.flatMap(applyPaymentEvent)
  )

/** A checkout of the account (the operator's and the fake provider's look-ups). */
export const findCheckout = (checkoutId: string) =>
  Effect.flatMap(CheckoutRepo, (checkouts) => checkouts.get(checkoutId))
