/** Credit: what is available, reserved and on balance, the lots with their expiry, and buying more. */
import { call } from "../api.js"
import type { DashboardCredits } from "../../../../core/schema/dashboard.js"
import { useLocation } from "../router.js"
import { Empty, formatDay, Page, Show, Table, useLoad } from "../ui.js"

export const CreditSummary = ({ credits }: { readonly credits: DashboardCredits }) => (
  <dl class="stats">
    <div><dt>Available</dt><dd data-testid="available">{credits.display}</dd></div>
    <div><dt>Reserved by running jobs</dt><dd>{credits.reserved_display}</dd></div>
    <div><dt>Balance</dt><dd>{credits.balance_display}</dd></div>
  </dl>
)

const CHECKOUT_RESULT: Record<string, readonly [string, string]> = {
  paid: ["success", "Payment received. The credit appears here as soon as the payment provider confirms it."],
  canceled: ["notice", "The checkout was canceled; nothing was charged."]
}

export const CreditsPage = () => {
  const { query } = useLocation()
  const [credits, reload] = useLoad(() => call((api) => api.dashboard.getDashboardCredits()), [])
  const result = CHECKOUT_RESULT[query.get("checkout") ?? ""]
  return (
    <Page title="Credits">
      {result && <p class={result[0]} role="status">{result[1]}</p>}
      <Show loaded={credits} what="your credit" retry={reload}>
        {(c) => (
          <>
            <CreditSummary credits={c} />
            <h2>Credit lots</h2>
            <p>Each purchase or grant is a lot that expires 365 days after it was bought. Jobs draw on the lot that expires first.</p>
            {c.lots.length === 0 ? <Empty>No credit yet.</Empty> : (
              <Table label="Credit lots" head={["Source", "Amount", "Remaining", "Bought", "Expires"]}>
                {c.lots.map((lot) => (
                  <tr key={lot.purchased_at + lot.expires_at + lot.amount_display}>
                    <td>{lot.source}</td>
                    <td>{lot.amount_display}</td>
                    <td>{lot.remaining_display}</td>
                    <td>{formatDay(lot.purchased_at)}</td>
                    <td>{formatDay(lot.expires_at)}</td>
                  </tr>
                ))}
              </Table>
            )}
            {c.lots_truncated && <p class="muted">Only the 100 lots that expire first are listed.</p>}
          </>
        )}
      </Show>
    </Page>
  )
}
