/**
 * The ledger, newest first, a page at a time, in decisions.md's columns: a hold changes what is
 * reserved, not the balance, so it shows under "Change to reserved" and never as money gained.
 */
import { useState } from "preact/hooks"
import { call } from "../api.js"
import { money } from "../money.js"
import { Link } from "../router.js"
import { Empty, formatDate, Page, Show, Table, useLoad } from "../ui.js"
import type { LedgerEntry } from "../../../../core/schema/dashboard.js"

const PAGE_SIZE = 25

export const LEDGER_COLUMNS = ["Date", "Kind", "Change to balance", "Change to reserved", "Balance after", "Reference"]

/** A change of zero is no change: a dash, not "$0.00". */
export const change = (micros: number) => (micros === 0 ? "—" : money(micros))

/** The job (a link to it) or the checkout the entry belongs to, else why it was made. */
const reference = (entry: LedgerEntry) =>
  entry.job !== null
    ? <Link href={`/dashboard/jobs/${entry.job}`}><code>{entry.job}</code></Link>
    : entry.checkout !== null
    ? <code>{entry.checkout}</code>
    : entry.reason

export const LedgerPage = () => {
  // the cursors of the pages before this one, to go back
  const [cursors, setCursors] = useState<ReadonlyArray<string | undefined>>([undefined])
  const cursor = cursors[cursors.length - 1]
  const [page, reload] = useLoad(() => call((api) => api.dashboard.getLedger({ urlParams: { limit: PAGE_SIZE, cursor } })), [cursor])
  return (
    <Page title="Ledger">
      <p>
        Every change to your credit: purchases and grants add to the balance; a job's hold reserves its cost while it runs,
        then a capture takes it from the balance when the job succeeds, or a release frees it when it does not.
      </p>
      <Show loaded={page} what="the ledger" retry={reload}>
        {(p) => (
          <>
            {p.data.length === 0 ? <Empty>No entries yet.</Empty> : (
              <Table label="Ledger entries, newest first" head={LEDGER_COLUMNS} rows={p.data.map((entry) => ({
                key: entry.id,
                cells: [
                  formatDate(entry.created_at), entry.kind, change(entry.balance_delta), change(entry.reserved_delta),
                  money(entry.balance_after), reference(entry)
                ]
              }))} />
            )}
            <div class="row pager">
              <button type="button" class="secondary" disabled={cursors.length === 1} onClick={() => setCursors(cursors.slice(0, -1))}>Newer entries</button>
              <button type="button" class="secondary" disabled={p.next_cursor === null} onClick={() => p.next_cursor !== null && setCursors([...cursors, p.next_cursor])}>Older entries</button>
            </div>
          </>
        )}
      </Show>
    </Page>
  )
}
