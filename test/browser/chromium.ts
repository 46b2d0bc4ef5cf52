/**
 * The browser tests' Chromium: the system's (Debian `chromium`, `.ci/run` installs it with apt;
 * playwright-core never downloads one), one instance per test file, plus the checks every page
 * gets: no serious or critical axe violation, nothing wider than the screen, and a screenshot
 * into `SCREENSHOTS` (a folder; `SCREENSHOTS=docs/screenshots` refreshes the committed ones).
 */
import AxeBuilder from "@axe-core/playwright"
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

/** axe-core on the page as it is now: no violation of impact serious or critical. */
export const expectAccessible = async (page: Page, name: string) => {
  const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]).analyze()
  const bad = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
  expect(bad.map((v) => `${name}: ${v.id} (${v.impact}) ${v.help}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)).toEqual([])
}

/** Nothing on the page is wider than the viewport (no sideways scrolling of the page itself). */
export const expectFitsWidth = async (page: Page, name: string) => {
  // a string: it runs in the page, whose globals this Node program does not type
  const { scroll, width } = await page.evaluate<{ scroll: number; width: number }>("({ scroll: document.documentElement.scrollWidth, width: window.innerWidth })")
  expect(scroll, `${name} is ${scroll} px wide in a ${width} px window`).toBeLessThanOrEqual(width)
}

export const screenshot = async (page: Page, name: string) => {
  const dir = process.env.SCREENSHOTS
  if (dir === undefined || dir === "") return
  mkdirSync(dir, { recursive: true })
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true })
}

/** All three checks, after the page has settled. */
export const checkPage = async (page: Page, name: string) => {
  await expectAccessible(page, name)
  await expectFitsWidth(page, name)
  await screenshot(page, name)
}
