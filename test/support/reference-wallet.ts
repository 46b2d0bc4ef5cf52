/**
 * A deliberately simple re-implementation of decisions.md's wallet, used only as the oracle
 * of the billing property tests. Mutable, no ledger, no ids: just the arithmetic of lots.
 */
export interface RefLot {
  /** The wallet's id of the lot: the last tie-break between lots bought at the same time. */
  readonly id: string
  readonly expiresAt: number
  readonly purchasedAt: number
  remaining: number
  expired: boolean
}

export class ReferenceWallet {
  private lots: Array<RefLot> = []
  private holds = new Map<string, Array<{ lot: RefLot; micros: number }>>()
  credited = 0
  captured = 0
  expiredTotal = 0
  refundedTotal = 0

  constructor(private readonly lifetimeMs: number) {}

  get balance() {
    return this.lots.reduce((s, l) => s + l.remaining, 0)
  }
  get reserved() {
    let sum = 0
    for (const draws of this.holds.values()) for (const d of draws) sum += d.micros
    return sum
  }
  get available() {
    return this.balance - this.reserved
  }
  get openHoldCount() {
    return this.holds.size
  }
  holdOf(jobId: string) {
    return this.holds.get(jobId)?.reduce((s, d) => s + d.micros, 0)
  }

  private heldOn(lot: RefLot) {
    let sum = 0
    for (const draws of this.holds.values()) for (const d of draws) if (d.lot === lot) sum += d.micros
    return sum
  }

  expire(now: number) {
    for (const lot of this.lots) {
      if (lot.expired || lot.expiresAt > now) continue
      const held = this.heldOn(lot)
      this.expiredTotal += lot.remaining - held
      lot.remaining = held
      lot.expired = true
    }
  }

  credit(id: string, amount: number, now: number): RefLot {
    this.expire(now)
    const lot = { id, expiresAt: now + this.lifetimeMs, purchasedAt: now, remaining: amount, expired: false }
    this.lots.push(lot)
    this.credited += amount
    return lot
  }

  get lotIds(): ReadonlySet<string> {
    return new Set(this.lots.map((lot) => lot.id))
  }

  /** A refund of a purchase: at most what remains of its lot unheld; nothing once it expired. */
  refund(lot: RefLot, amount: number, now: number): number {
    this.expire(now)
    if (lot.expired) return 0
    const removed = Math.max(0, Math.min(amount, lot.remaining - this.heldOn(lot)))
    lot.remaining -= removed
    this.refundedTotal += removed
    return removed
  }

  /** False when the amount is over what is available (the 402 case). */
  hold(jobId: string, amount: number, now: number): boolean {
    this.expire(now)
    if (amount > this.available) return false
    const draws: Array<{ lot: RefLot; micros: number }> = []
    let needed = amount
    // decisions.md: earliest expiry first; between equal expiries, the earlier bought, then the lower id
    const candidates = this.lots.filter((l) => !l.expired)
      .sort((a, b) => a.expiresAt - b.expiresAt || a.purchasedAt - b.purchasedAt || a.id.localeCompare(b.id))
    for (const lot of candidates) {
      const take = Math.min(needed, lot.remaining - this.heldOn(lot))
      if (take > 0) {
        draws.push({ lot, micros: take })
        needed -= take
      }
    }
    this.holds.set(jobId, draws)
    return true
  }

  capture(jobId: string, now: number) {
    this.expire(now)
    const draws = this.holds.get(jobId)
    if (draws === undefined) throw new Error(`reference: no hold for ${jobId}`)
    this.holds.delete(jobId)
    for (const d of draws) {
      d.lot.remaining -= d.micros
      this.captured += d.micros
    }
  }

  release(jobId: string, now: number) {
    this.expire(now)
    const draws = this.holds.get(jobId)
    if (draws === undefined) throw new Error(`reference: no hold for ${jobId}`)
    this.holds.delete(jobId)
    for (const d of draws) {
      if (!d.lot.expired) continue
      d.lot.remaining -= d.micros
      this.expiredTotal += d.micros
    }
  }
}
