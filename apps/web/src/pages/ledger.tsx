/** The ledger, newest first, a page at a time. */
import { useState } from "preact/hooks"
import { call } from "../api.js"
import { Link } from "../router.js"
import { Empty, formatDate, Page, Show, Table, useLoad } from "../ui.js"

const PAGE_SIZE = 25

export const LedgerPage = () => {
  // the cursors of the pages before this one, to go back
  const [cursors, setCursors] = useState<ReadonlyArray<string | undefined>>([undefined])
  const cursor = cursors[cursors.length - 1]
  const [page, reload] = useLoad(() => call((api) => api.dashboard.getLedger({ urlParams: { limit: PAGE_SIZE, cursor } })), [cursor])
  return (
    <Page title="Ledger">
      <p>Every change to your credit: purchases and grants, holds when a job starts, captures when it succeeds, releases when it does not, expiries.</p>
      <Show loaded={page} what="the ledger" retry={reload}>
        {(p) => (
          <>
            {p.data.length === 0 ? <Empty>No entries yet.</Empty> : (
              <Table label="Ledger entries, newest first" head={["Date", "Kind", "Amount", "Reason", "Job or checkout"]}>
                {p.data.map((entry) => (
                  <tr key={entry.id}>
                    <td>{formatDate(entry.created_at)}</td>
                    <td>{entry.kind}</td>
                    <td>{entry.display}</td>
                    <td>{entry.reason}</td>
                    <td>{entry.job !== null ? <Link href={`/dashboard/jobs/${entry.job}`}>{entry.job}</Link> : entry.checkout ?? "—"}</td>
                  </tr>
                ))}
              </Table>
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
