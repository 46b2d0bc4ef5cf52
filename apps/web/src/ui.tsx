/** Shared pieces: data loading with its three states, forms, tables, dates and the chart. */
import { cloneElement, type ComponentChildren, type VNode } from "preact"
import { useCallback, useEffect, useId, useRef, useState } from "preact/hooks"
import { describeError } from "./api.js"
import { hasNavigated } from "./router.js"

export type Loaded<A> =
  | { readonly state: "loading" }
  | { readonly state: "failed"; readonly message: string }
  | { readonly state: "ready"; readonly value: A }

/** Loads when `deps` change; `reload` loads again, keeping what is shown until the answer. */
export const useLoad = <A,>(load: () => Promise<A>, deps: ReadonlyArray<unknown>) => {
  const [loaded, setLoaded] = useState<Loaded<A>>({ state: "loading" })
  const generation = useRef(0)
  const run = useCallback(() => {
    const mine = ++generation.current
    load().then(
      (value) => mine === generation.current && setLoaded({ state: "ready", value }),
      (error) => mine === generation.current && setLoaded({ state: "failed", message: describeError(error) })
    )
  }, deps)
  useEffect(() => {
    setLoaded({ state: "loading" })
    run()
  }, [run])
  return [loaded, run] as const
}

export const Loading = ({ what }: { readonly what: string }) => (
  <p class="loading" role="status" aria-live="polite">Loading {what}…</p>
)

export const Failure = ({ message, retry }: { readonly message: string; readonly retry?: () => void }) => (
  <div class="failure" role="alert">
    <p>{message}</p>
    {retry && <button type="button" class="secondary" onClick={retry}>Try again</button>}
  </div>
)

export const Empty = ({ children }: { readonly children: ComponentChildren }) => <p class="empty">{children}</p>

/** Renders a load's three states; `children` gets the value. */
export const Show = <A,>({ loaded, what, retry, children }: {
  readonly loaded: Loaded<A>
  readonly what: string
  readonly retry?: () => void
  readonly children: (value: A) => ComponentChildren
}) => {
  if (loaded.state === "loading") return <Loading what={what} />
  if (loaded.state === "failed") return <Failure message={loaded.message} retry={retry} />
  return <>{children(loaded.value)}</>
}

/** A form action: busy while it runs, its error shown in words. */
export const useAction = () => {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const run = async <A,>(action: () => Promise<A>): Promise<A | undefined> => {
    setBusy(true)
    setError(null)
    try {
      return await action()
    } catch (failure) {
      setError(describeError(failure))
      return undefined
    } finally {
      setBusy(false)
    }
  }
  return { busy, error, setError, run }
}

export const FormError = ({ error }: { readonly error: string | null }) =>
  error === null ? null : <p class="failure" role="alert">{error}</p>

export interface Row {
  readonly key: string
  readonly cells: ReadonlyArray<ComponentChildren>
  /** The first cell names the row (a row header). */
  readonly named?: boolean
}

/**
 * A table readable at any width with nothing hidden: at 1280 px its cells wrap to fit; on
 * narrow screens (styles.css) each row becomes a card of "header: value" lines, every cell
 * labelled with its column's header. The roles are explicit because a table shown as blocks
 * loses them in some browsers. `foot`: a totals row under the body.
 */
export const Table = ({ label, head, rows, foot }: {
  readonly label: string
  readonly head: ReadonlyArray<string>
  readonly rows: ReadonlyArray<Row>
  readonly foot?: Row
}) => {
  const line = (row: Row) => (
    <tr role="row" key={row.key}>
      {row.cells.map((cell, i) => row.named === true && i === 0
        ? <th scope="row" role="rowheader" data-label={head[i]} key={i}>{cell}</th>
        : <td role="cell" data-label={head[i]} key={i}>{cell}</td>)}
    </tr>
  )
  return (
    <table class="stack" role="table">
      <caption class="visually-hidden">{label}</caption>
      <thead role="rowgroup"><tr role="row">{head.map((h) => <th scope="col" role="columnheader" key={h}>{h}</th>)}</tr></thead>
      <tbody role="rowgroup">{rows.map(line)}</tbody>
      {foot && <tfoot role="rowgroup" class="total">{line(foot)}</tfoot>}
    </table>
  )
}

export const formatDate = (iso: string | null) =>
  iso === null ? "—" : new Date(iso).toLocaleString("en-GB", { dateStyle: "medium", timeStyle: "short", timeZone: "UTC" }) + " UTC"

export const formatDay = (iso: string) =>
  new Date(iso).toLocaleDateString("en-GB", { dateStyle: "medium", timeZone: "UTC" })

/**
 * A secret shown once (an API key, a webhook signing secret): copyable, focused so a screen
 * reader reads it first, gone once dismissed.
 */
export const ShownOnce = ({ title, note, what, secret, onDone }: {
  readonly title: string
  readonly note: string
  /** What the copy button copies: "key", "secret". */
  readonly what: string
  readonly secret: string
  readonly onDone: () => void
}) => {
  const [copied, setCopied] = useState<string | null>(null)
  const box = useRef<HTMLDivElement>(null)
  useEffect(() => box.current?.focus(), [])
  return (
    <div class="secret" ref={box} tabIndex={-1} role="region" aria-label={title}>
      <h2>{title}</h2>
      <p><strong>Copy it now: it is shown only once.</strong> {note}</p>
      <code class="key" data-testid="new-secret">{secret}</code>
      <div class="row">
        <button type="button" onClick={() =>
          navigator.clipboard.writeText(secret).then(() => setCopied("Copied."), () => setCopied(`Could not copy: select the ${what} and copy it by hand.`))}>
          Copy {what}
        </button>
        <button type="button" class="secondary" onClick={onDone}>I have stored it</button>
      </div>
      {copied && <p role="status">{copied}</p>}
    </div>
  )
}

/**
 * A button whose action asks first: `label` shows, `name` is its accessible name (the label and
 * what it acts on), and the question takes its place with a confirming button, focused.
 */
export const Confirmed = ({ label, name, question, yes, action, done }: {
  readonly label: string
  readonly name: string
  readonly question: string
  readonly yes: string
  readonly action: () => Promise<unknown>
  readonly done: () => void
}) => {
  const [confirming, setConfirming] = useState(false)
  const run = useAction()
  const confirm = useRef<HTMLButtonElement>(null)
  useEffect(() => {
    if (confirming) confirm.current?.focus()
  }, [confirming])
  if (!confirming) return <button type="button" class="secondary" aria-label={name} onClick={() => setConfirming(true)}>{label}</button>
  return (
    <div class="confirm" role="group" aria-label={`Confirm: ${name}`}>
      <span>{question}</span>
      <button type="button" class="danger" ref={confirm} disabled={run.busy} onClick={() => run.run(async () => {
        await action()
        return true
      }).then((ok) => ok && done())}>
        {yes}
      </button>
      <button type="button" class="secondary" onClick={() => setConfirming(false)}>Cancel</button>
      <FormError error={run.error} />
    </div>
  )
}

/** A labelled control; the hint is tied to it with aria-describedby, outside its name. */
export const Field = ({ label, children, hint }: { readonly label: string; readonly children: VNode<any>; readonly hint?: string }) => {
  const id = useId()
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {cloneElement(children, { id, "aria-describedby": hint ? `${id}-hint` : undefined })}
      {hint && <small id={`${id}-hint`}>{hint}</small>}
    </div>
  )
}

/** A page's heading and title; the heading takes focus when the page changes (screen readers hear it). */
export const Page = ({ title, children }: { readonly title: string; readonly children: ComponentChildren }) => {
  const heading = useRef<HTMLHeadingElement>(null)
  useEffect(() => {
    document.title = `${title} · Hush`
    // after an in-app link, as a full page load would; on a load itself focus stays at the top (skip link first)
    if (hasNavigated()) heading.current?.focus()
  }, [title])
  return (
    <>
      <h1 ref={heading} tabIndex={-1}>{title}</h1>
      {children}
    </>
  )
}

