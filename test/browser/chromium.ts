/**
 * The browser tests' Chromium: the system's (Debian `chromium`, `.ci/run` installs it with apt;
 * playwright-core never downloads one), one instance per test file, plus the checks every page
 * gets: no axe violation at all (WCAG 2.1 A/AA and best practices), nothing wider than the
 * screen, no table cell or button outside the window (nor in a hidden sideways scroller), and a
 * screenshot into `SCREENSHOTS` (a folder; `SCREENSHOTS=docs/screenshots` refreshes the
 * committed ones).
 */
// the named export: 4.13's types are CommonJS, where the default is the module itself
import { AxeBuilder } from "@axe-core/playwright"
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { type Browser, chromium, type Page } from "playwright-core"
import { expect } from "vitest"

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"

export const launchChromium = (): Promise<Browser> =>
  chromium.launch({
    executablePath: CHROMIUM,
    // as root in a container Chromium's sandbox cannot start; the pages are our own
    args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"]
  })

/** axe-core on the page as it is now: no violation, whatever its impact. */
export const expectAccessible = async (page: Page, name: string) => {
  const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]).analyze()
  const bad = results.violations
  expect(bad.map((v) => `${name}: ${v.id} (${v.impact}) ${v.help}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)).toEqual([])
}

/** Nothing on the page is wider than the viewport (no sideways scrolling of the page itself). */
export const expectFitsWidth = async (page: Page, name: string) => {
  // a string: it runs in the page, whose globals this Node program does not type
  const { scroll, width } = await page.evaluate<{ scroll: number; width: number }>("({ scroll: document.documentElement.scrollWidth, width: window.innerWidth })")
  expect(scroll, `${name} is ${scroll} px wide in a ${width} px window`).toBeLessThanOrEqual(width)
}

/**
 * Every table cell and button lies inside the window, and no box that holds one scrolls
 * sideways (a cell reachable only by scrolling a region is hidden too). Visually hidden
 * elements (a 1 px box: the column headers of a table shown as cards) are not shown, so not judged.
 */
export const expectNothingOutside = async (page: Page, name: string) => {
  const outside = await page.evaluate<ReadonlyArray<string>>(`(() => {
    const hidden = (element) => {
      for (let e = element; e !== null; e = e.parentElement) {
        const box = e.getBoundingClientRect()
        if (box.width <= 1 || box.height <= 1 || getComputedStyle(e).display === "none") return true
      }
      return false
    }
    const say = (e, why) => why + ": <" + e.tagName.toLowerCase() + "> " + (e.textContent || "").trim().replace(/\\s+/g, " ").slice(0, 50)
    const found = []
    for (const e of document.querySelectorAll("td, th, button, a.button, input, select")) {
      if (hidden(e)) continue
      const box = e.getBoundingClientRect()
      if (box.left < -0.5 || box.right > window.innerWidth + 0.5) found.push(say(e, "outside " + Math.round(box.left) + "–" + Math.round(box.right)))
    }
    for (const e of document.querySelectorAll("body *")) {
      if (hidden(e) || e.scrollWidth <= e.clientWidth + 1) continue
      const overflow = getComputedStyle(e).overflowX
      if ((overflow === "auto" || overflow === "scroll" || overflow === "hidden") && e.querySelector("td, th, button")) found.push(say(e, "scrolls sideways"))
    }
    return found
  })()`)
  expect(outside, `${name} at ${page.viewportSize()?.width} px`).toEqual([])
}

export const screenshot = async (page: Page, name: string) => {
  const dir = process.env.SCREENSHOTS
  if (dir === undefined || dir === "") return
  mkdirSync(dir, { recursive: true })
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true })
}

/** All the checks, after the page has settled; `screenshot: false` for a page another test photographs. */
export const checkPage = async (page: Page, name: string, options: { readonly screenshot?: boolean } = {}) => {
  await expectAccessible(page, name)
  await expectFitsWidth(page, name)
  await expectNothingOutside(page, name)
  if (options.screenshot !== false) await screenshot(page, name)
}
