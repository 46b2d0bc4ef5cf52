/** A small history router: the pages are the server's paths (decisions.md, Web dashboard). */
import type { ComponentChildren, JSX } from "preact"
import { useEffect, useState } from "preact/hooks"

const listeners = new Set<() => void>()
let moved = false

/** Whether the page changed without a reload since the document loaded (then focus goes to the new heading). */
export const hasNavigated = () => moved

export const navigate = (href: string, options: { readonly replace?: boolean } = {}) => {
  moved = true
  if (options.replace) history.replaceState(null, "", href)
  else history.pushState(null, "", href)
  for (const listener of listeners) listener()
}

export interface Location {
  readonly path: string
  readonly query: URLSearchParams
}

const current = (): Location => ({ path: location.pathname.replace(/\/+$/, "") || "/", query: new URLSearchParams(location.search) })

export const useLocation = (): Location => {
  const [where, setWhere] = useState(current)
  useEffect(() => {
    const update = () => setWhere(current())
    listeners.add(update)
    addEventListener("popstate", update)
    return () => {
      listeners.delete(update)
      removeEventListener("popstate", update)
    }
  }, [])
  return where
}

/** An ordinary link that changes page without reloading (modified clicks open a tab as usual). */
export const Link = (props: JSX.HTMLAttributes<HTMLAnchorElement> & { readonly href: string; readonly children?: ComponentChildren }) => (
  <a
    {...props}
    onClick={(event) => {
      if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
      event.preventDefault()
      navigate(props.href)
    }}
  />
)
