/**
 * The wallet of one account, as pure functions over a snapshot (decisions.md, Money).
 *
 * - Every purchase or grant is a lot that expires `lotLifetimeMs` after it was bought.
 * - balance = Σ lot.remaining; reserved = Σ open holds; available = balance − reserved ≥ 0.
 * - A hold draws on unexpired lots, earliest expiry first; it is captured (charged) or
 *   released exactly once.
 * - A refund removes at most a purchase lot's unheld remainder with a `refund` entry.
 * - Expiry removes a lot's unheld remainder with an `expiry` entry; micros held on an
 *   expired lot stay held and are captured normally, or expire at once when released.
 * - Every change appends ledger entries whose *_after equal the previous entry's plus deltas.
 *
 * Each operation first expires what is due at `now`, so no caller can forget it.
 */
import { Data, Either } from "effect"
import type { LedgerKind, LotSource } from "../domain/enums.js"
import { HoldDraw, HoldRecord, LedgerEntryRecord, LotRecord } from "../domain/records.js"
import { InsufficientCredit } from "../errors.js"
import { formatMicros } from "../money.js"
import type { MintId } from "../ports/ids.js"
import type { WalletChange, WalletSnapshot } from "../ports/repositories.js"

/** A hold was asked to resolve twice, or never existed: a lost race, never a second charge. */
export class HoldNotOpen extends Data.TaggedError("HoldNotOpen")<{ readonly jobId: string }> {}

export interface WalletStep {
  readonly wallet: WalletSnapshot
  readonly change: WalletChange
}

export const emptyWallet = (accountId: string): WalletSnapshot => ({
  accountId, lots: [], openHolds: [], lastSeq: 0, balance: 0, reserved: 0
})

export const available = (wallet: WalletSnapshot): number => wallet.balance - wallet.reserved

/** Micros of `lot` that open holds reserve. */
const heldOn = (wallet: WalletSnapshot, lotId: string): number =>
  wallet.openHolds.reduce(
    (sum, hold) => sum + hold.draws.reduce((s, d) => (d.lotId === lotId ? s + d.micros : s), 0),
    0
  )

/** Accumulates lot/hold updates and ledger entries while keeping the snapshot current. */
class Builder {
  private lots = new Map<string, LotRecord>()
  private holds = new Map<string, HoldRecord>()
  private entries: Array<LedgerEntryRecord> = []
  constructor(private wallet: WalletSnapshot, private readonly mint: MintId, private readonly now: number) {}

  get current(): WalletSnapshot {
    return this.wallet
  }

  putLot(lot: LotRecord) {
    this.lots.set(lot.id, lot)
    const others = this.wallet.lots.filter((l) => l.id !== lot.id)
    // the snapshot keeps only lots that still carry micros
    this.wallet = { ...this.wallet, lots: lot.remainingMicros > 0 ? [...others, lot] : others }
  }

  putHold(hold: HoldRecord) {
    this.holds.set(hold.id, hold)
    const others = this.wallet.openHolds.filter((h) => h.id !== hold.id)
    this.wallet = { ...this.wallet, openHolds: hold.status === "open" ? [...others, hold] : others }
  }

  entry(fields: {
    kind: LedgerKind
    reason: string
    balanceDelta: number
    reservedDelta: number
    jobId?: string | null
    lotId?: string | null
    checkoutId?: string | null
  }): LedgerEntryRecord {
    const balanceAfter = this.wallet.balance + fields.balanceDelta
    const reservedAfter = this.wallet.reserved + fields.reservedDelta
    const entry = new LedgerEntryRecord({
      id: this.mint("txn"),
      accountId: this.wallet.accountId,
      seq: this.wallet.lastSeq + 1,
      kind: fields.kind,
      reason: fields.reason,
      balanceDelta: fields.balanceDelta,
      reservedDelta: fields.reservedDelta,
      balanceAfter,
      reservedAfter,
      jobId: fields.jobId ?? null,
      lotId: fields.lotId ?? null,
      checkoutId: fields.checkoutId ?? null,
      createdAt: this.now
    })
    this.entries.push(entry)
    this.wallet = { ...this.wallet, lastSeq: entry.seq, balance: balanceAfter, reserved: reservedAfter }
    return entry
  }

  done(): WalletStep {
    return {
      wallet: this.wallet,
      change: { lots: [...this.lots.values()], holds: [...this.holds.values()], entries: this.entries }
    }
  }
}

const expireDueInto = (b: Builder, now: number) => {
  const due = b.current.lots
    .filter((lot) => !lot.expired && lot.expiresAt <= now)
    .sort((x, y) => x.expiresAt - y.expiresAt || x.id.localeCompare(y.id))
  for (const lot of due) {
    const held = heldOn(b.current, lot.id)
    const unheld = lot.remainingMicros - held
    b.putLot(new LotRecord({ ...lot, expired: true, remainingMicros: held }))
    if (unheld > 0) {
      b.entry({
        kind: "expiry", reason: `lot ${lot.id} expired`, balanceDelta: -unheld, reservedDelta: 0, lotId: lot.id
      })
    }
  }
}

/** Writes `expiry` entries for every lot due at `now`. */
export const expireDue = (wallet: WalletSnapshot, now: number, mint: MintId): WalletStep => {
  const b = new Builder(wallet, mint, now)
  expireDueInto(b, now)
  return b.done()
}

/** A purchase or a grant: a new lot and its ledger entry. */
export const addCredit = (
  wallet: WalletSnapshot,
  credit: {
    readonly source: LotSource
    readonly amountMicros: number
    readonly lifetimeMs: number
    readonly reason: string
    readonly checkoutId?: string | null
  },
  now: number,
  mint: MintId
): WalletStep => {
  if (!Number.isSafeInteger(credit.amountMicros) || credit.amountMicros <= 0) {
    throw new RangeError(`credit must be a positive integer of micros, got ${credit.amountMicros}`)
  }
  const b = new Builder(wallet, mint, now)
  expireDueInto(b, now)
  const lot = new LotRecord({
    id: mint("lot"),
    accountId: wallet.accountId,
    source: credit.source,
    amountMicros: credit.amountMicros,
    remainingMicros: credit.amountMicros,
    purchasedAt: now,
    expiresAt: now + credit.lifetimeMs,
    expired: false,
    checkoutId: credit.checkoutId ?? null
  })
  b.putLot(lot)
  b.entry({
    kind: credit.source,
    reason: credit.reason,
    balanceDelta: credit.amountMicros,
    reservedDelta: 0,
    lotId: lot.id,
    checkoutId: credit.checkoutId ?? null
  })
  return b.done()
}

/**
 * A refund or a lost dispute of a purchase: removes `amountMicros` from the purchase's lot,
 * at most what remains of it unheld (micros running jobs reserve stay theirs, so available
 * never goes negative), with a `refund` entry. An expired or used-up lot gives nothing back.
 */
export const refund = (
  wallet: WalletSnapshot,
  request: { readonly checkoutId: string; readonly amountMicros: number; readonly reason: string },
  now: number,
  mint: MintId
): WalletStep & { readonly removedMicros: number } => {
  if (!Number.isSafeInteger(request.amountMicros) || request.amountMicros < 0) {
    throw new RangeError(`a refund must be a non-negative integer of micros, got ${request.amountMicros}`)
  }
  const b = new Builder(wallet, mint, now)
  expireDueInto(b, now)
  const lot = b.current.lots.find((l) => l.source === "purchase" && l.checkoutId === request.checkoutId && !l.expired)
  if (lot === undefined) return { ...b.done(), removedMicros: 0 }
  const removed = Math.min(request.amountMicros, lot.remainingMicros - heldOn(b.current, lot.id))
  if (removed <= 0) return { ...b.done(), removedMicros: 0 }
  b.putLot(new LotRecord({ ...lot, remainingMicros: lot.remainingMicros - removed }))
  b.entry({
    kind: "refund", reason: request.reason, balanceDelta: -removed, reservedDelta: 0,
    lotId: lot.id, checkoutId: request.checkoutId
  })
  return { ...b.done(), removedMicros: removed }
}

/** Reserves a job's exact cost, earliest-expiring lots first; refused above `available`. */
export const hold = (
  wallet: WalletSnapshot,
  request: { readonly jobId: string; readonly amountMicros: number },
  now: number,
  mint: MintId
): Either.Either<WalletStep & { readonly hold: HoldRecord }, InsufficientCredit> => {
  if (!Number.isSafeInteger(request.amountMicros) || request.amountMicros <= 0) {
    throw new RangeError(`a hold must be a positive integer of micros, got ${request.amountMicros}`)
  }
  const b = new Builder(wallet, mint, now)
  expireDueInto(b, now)
  const free = available(b.current)
  if (request.amountMicros > free) {
    return Either.left(new InsufficientCredit({
      detail: `this job costs ${formatMicros(request.amountMicros)} but only ${formatMicros(free)} of credit is available`
    }))
  }
  const draws: Array<HoldDraw> = []
  let needed = request.amountMicros
  const lots = b.current.lots
    .filter((lot) => !lot.expired)
    .sort((x, y) => x.expiresAt - y.expiresAt || x.purchasedAt - y.purchasedAt || x.id.localeCompare(y.id))
  for (const lot of lots) {
    if (needed === 0) break
    const take = Math.min(needed, lot.remainingMicros - heldOn(b.current, lot.id))
    if (take > 0) {
      draws.push(new HoldDraw({ lotId: lot.id, micros: take }))
      needed -= take
    }
  }
  if (needed !== 0) throw new Error(`wallet ${wallet.accountId}: available credit is not backed by lots`)
  const newHold = new HoldRecord({
    id: mint("hold"),
    accountId: wallet.accountId,
    jobId: request.jobId,
    amountMicros: request.amountMicros,
    draws,
    status: "open",
    createdAt: now,
    resolvedAt: null
  })
  b.putHold(newHold)
  b.entry({
    kind: "hold", reason: `hold for job ${request.jobId}`, balanceDelta: 0,
    reservedDelta: request.amountMicros, jobId: request.jobId
  })
  return Either.right({ ...b.done(), hold: newHold })
}

const openHoldOf = (wallet: WalletSnapshot, jobId: string) => wallet.openHolds.find((h) => h.jobId === jobId)

/** Charges a job's hold, exactly its amount. */
export const capture = (
  wallet: WalletSnapshot, jobId: string, now: number, mint: MintId
): Either.Either<WalletStep & { readonly entry: LedgerEntryRecord }, HoldNotOpen> => {
  const b = new Builder(wallet, mint, now)
  expireDueInto(b, now)
  const open = openHoldOf(b.current, jobId)
  if (open === undefined) return Either.left(new HoldNotOpen({ jobId }))
  b.putHold(HoldRecord.copy(open, { status: "captured", resolvedAt: now }))
  for (const draw of open.draws) {
    const lot = b.current.lots.find((l) => l.id === draw.lotId)
    if (lot === undefined) throw new Error(`hold ${open.id} draws on unknown lot ${draw.lotId}`)
    b.putLot(new LotRecord({ ...lot, remainingMicros: lot.remainingMicros - draw.micros }))
  }
  const entry = b.entry({
    kind: "capture", reason: `charge for job ${jobId}`, balanceDelta: -open.amountMicros,
    reservedDelta: -open.amountMicros, jobId
  })
  return Either.right({ ...b.done(), entry })
}

/** Frees a job's hold; micros drawn on lots that expired meanwhile expire now. */
export const release = (
  wallet: WalletSnapshot, jobId: string, now: number, mint: MintId, reason: string
): Either.Either<WalletStep, HoldNotOpen> => {
  const b = new Builder(wallet, mint, now)
  expireDueInto(b, now)
  const open = openHoldOf(b.current, jobId)
  if (open === undefined) return Either.left(new HoldNotOpen({ jobId }))
  b.putHold(HoldRecord.copy(open, { status: "released", resolvedAt: now }))
  b.entry({ kind: "release", reason, balanceDelta: 0, reservedDelta: -open.amountMicros, jobId })
  for (const draw of open.draws) {
    const lot = b.current.lots.find((l) => l.id === draw.lotId)
    if (lot === undefined) throw new Error(`hold ${open.id} draws on unknown lot ${draw.lotId}`)
    if (!lot.expired) continue
    b.putLot(new LotRecord({ ...lot, remainingMicros: lot.remainingMicros - draw.micros }))
    b.entry({
      kind: "expiry", reason: `released hold on expired lot ${lot.id}`, balanceDelta: -draw.micros,
      reservedDelta: 0, jobId, lotId: lot.id
    })
  }
  return Either.right(b.done())
}

export const isEmptyChange = (change: WalletChange) =>
  change.lots.length === 0 && change.holds.length === 0 && change.entries.length === 0

