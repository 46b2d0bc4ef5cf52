/** Credit: what is available, reserved and on balance, the lots with their expiry, and buying more. */
import { useEffect, useState } from "preact/hooks"
import { call } from "../api.js"
import { dollarsToMicros } from "../money.js"
import type { DashboardCredits } from "../../../../core/schema/dashboard.js"
import { useLocation } from "../router.js"
import { useSession } from "../session.js"
import { Empty, Field, FormError, formatDay, Page, Show, Table, useAction, useLoad } from "../ui.js"

export const CreditSummary = ({ credits }: { readonly credits: DashboardCredits }) => (
  <dl class="stats">
    <div><dt>Available</dt><dd data-testid="available">{credits.display}</dd></div>
    <div><dt>Reserved by running jobs</dt><dd>{credits.reserved_display}</dd></div>
    <div><dt>Balance</dt><dd>{credits.balance_display}</dd></div>
  </dl>
)


const PRESETS = ["10", "20", "50", "100"]
const PENDING_CHECKOUT = "hush.pending-checkout"

const BuyCredit = ({ verified }: { readonly verified: boolean }) => {
  const [choice, setChoice] = useState("20")
  const [other, setOther] = useState("")
  const action = useAction()
  // one idempotency key per intended purchase: a double submit opens one checkout
  const [attempt] = useState(() => crypto.randomUUID())
  return (
    <form class="card" onSubmit={(event) => {
      event.preventDefault()
      const amount = dollarsToMicros(choice === "other" ? other : choice)
      if (amount === null || amount < 10_000_000 || amount > 1_000_000_000) {
        action.setError("Enter an amount from $10 to $1,000, in dollars and cents.")
        return
      }
      action.run(async () => {
        const checkout = await call((api) => api.dashboard.createCheckout({ payload: { amount_micros: amount }, headers: { "idempotency-key": attempt } }))
        sessionStorage.setItem(PENDING_CHECKOUT, checkout.checkout_id)
        location.assign(checkout.url)
      })
    }}>
      <h2>Buy credit</h2>
      {!verified && <p class="notice">Confirm your e-mail address first: buying credit needs it.</p>}
      <fieldset>
        <legend>Amount</legend>
        {PRESETS.map((dollars) => (
          <label class="check" key={dollars}>
            <input type="radio" name="amount" value={dollars} checked={choice === dollars} onChange={() => setChoice(dollars)} />
            <span>${dollars}</span>
          </label>
        ))}
        <label class="check">
          <input type="radio" name="amount" value="other" checked={choice === "other"} onChange={() => setChoice("other")} />
          <span>Another amount</span>
        </label>
        {choice === "other" && (
          <Field label="Amount in US dollars" hint="From $10 to $1,000.">
            <input type="text" inputMode="decimal" name="other_amount" value={other} onInput={(e) => setOther(e.currentTarget.value)} />
          </Field>
        )}
      </fieldset>
      <FormError error={action.error} />
      <button type="submit" disabled={action.busy}>{action.busy ? "Opening checkout…" : "Continue to payment"}</button>
    </form>
  )
}

/** Back from a paid checkout: waits for its purchase in the ledger (the provider's event may come after the redirect). */
const usePaidCheckout = (paid: boolean, onArrived: () => void) => {
  const [arrived, setArrived] = useState<string | null>(null)
  const [late, setLate] = useState(false)
  useEffect(() => {
    const id = sessionStorage.getItem(PENDING_CHECKOUT)
    if (!paid || id === null) return
    let stopped = false
    const started = Date.now()
    const look = async () => {
      if (stopped) return
      const page = await call((api) => api.dashboard.getLedger({ urlParams: { limit: 20 } })).catch(() => null)
      const entry = page?.data.find((e) => e.checkout === id && e.kind === "purchase")
      if (entry !== undefined) {
        sessionStorage.removeItem(PENDING_CHECKOUT)
        setArrived(entry.display)
        onArrived()
      } else if (Date.now() - started > 30_000) setLate(true)
      else setTimeout(look, 1_000)
    }
    void look()
    return () => {
      stopped = true
    }
  }, [paid])
  return { arrived, late }
}

const CheckoutResult = ({ outcome, onArrived }: { readonly outcome: string | null; readonly onArrived: () => void }) => {
  const { arrived, late } = usePaidCheckout(outcome === "paid", onArrived)
  useEffect(() => {
    if (outcome === "canceled") sessionStorage.removeItem(PENDING_CHECKOUT)
  }, [outcome])
  if (outcome === "canceled") return <p class="notice" role="status">The checkout was canceled; nothing was charged.</p>
  if (outcome !== "paid") return null
  if (arrived !== null) return <p class="success" role="status">Payment received: {arrived} added to your credit.</p>
  if (late) return <p class="notice" role="status">Payment received. The credit has not arrived yet: it shows here once the payment provider confirms it.</p>
  return <p class="loading" role="status">Payment received. Waiting for the payment provider to confirm it…</p>
}

export const CreditsPage = () => {
  const { query } = useLocation()
  const { session } = useSession()
  const [credits, reload] = useLoad(() => call((api) => api.dashboard.getDashboardCredits()), [])
  return (
    <Page title="Credits">
      <CheckoutResult outcome={query.get("checkout")} onArrived={reload} />
      <Show loaded={credits} what="your credit" retry={reload}>
        {(c) => (
          <>
            <CreditSummary credits={c} />
            <h2>Credit lots</h2>
            <p>Each purchase or grant is a lot that expires 365 days after it was bought. Jobs draw on the lot that expires first.</p>
            {c.lots.length === 0 ? <Empty>No credit yet.</Empty> : (
              <Table label="Credit lots" head={["Source", "Amount", "Remaining", "Bought", "Expires"]} rows={c.lots.map((lot, i) => ({
                key: `${i}-${lot.purchased_at}`,
                named: true,
                cells: [lot.source, lot.amount_display, lot.remaining_display, formatDay(lot.purchased_at), formatDay(lot.expires_at)]
              }))} />
            )}
            {c.lots_truncated && <p class="muted">Only the 100 lots that expire first are listed.</p>}
          </>
        )}
      </Show>
      <BuyCredit verified={session?.user.verified ?? false} />
    </Page>
  )
}
