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

/** A wide table in a scrollable, keyboard-reachable region (narrow screens scroll it sideways). */
export const Table = ({ label, head, children }: {
  readonly label: string
  readonly head: ReadonlyArray<string>
  readonly children: ComponentChildren
}) => (
  <div class="table-scroll" role="region" aria-label={label} tabIndex={0}>
    <table>
      <caption class="visually-hidden">{label}</caption>
      <thead><tr>{head.map((h) => <th scope="col" key={h}>{h}</th>)}</tr></thead>
      <tbody>{children}</tbody>
    </table>
  </div>
)

export const formatDate = (iso: string | null) =>
  iso === null ? "—" : new Date(iso).toLocaleString("en-GB", { dateStyle: "medium", timeStyle: "short", timeZone: "UTC" }) + " UTC"

export const formatDay = (iso: string) =>
  new Date(iso).toLocaleDateString("en-GB", { dateStyle: "medium", timeZone: "UTC" })

/** A bar chart of one number per label; the numbers are also in the table beside it. */
export const BarChart = ({ title, bars }: {
  readonly title: string
  readonly bars: ReadonlyArray<{ readonly label: string; readonly value: number; readonly text: string }>
}) => {
  const max = Math.max(1, ...bars.map((b) => b.value))
  const width = 600
  const height = 160
  const step = width / Math.max(1, bars.length)
  const total = bars.reduce((sum, b) => sum + b.value, 0)
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${width} ${height + 4}`} role="img" aria-label={`${title}: ${total} in total over ${bars.length} days`} preserveAspectRatio="none">
        <line x1="0" y1={height} x2={width} y2={height} class="axis" />
        {bars.map((bar, i) => {
          const h = (bar.value / max) * height
          return (
            <rect key={bar.label} x={i * step + step * 0.15} y={height - h} width={step * 0.7} height={h} class="bar" data-value={bar.value}>
              <title>{`${bar.label}: ${bar.text}`}</title>
            </rect>
          )
        })}
      </svg>
      <figcaption>{title}</figcaption>
    </figure>
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

