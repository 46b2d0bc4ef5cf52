/**
 * A bar chart of one number per day: labelled axes (its ticks, the first, middle and last
 * days), and each day's values on hover or from the keyboard (one tab stop; the arrow keys,
 * Home and End move along the days) in a line under the chart that screen readers hear. The
 * SVG itself is drawn in pixels of its container's width, so its text keeps its size on a
 * phone; it is hidden from screen readers, which get the same numbers from the readout and the
 * table beside it.
 */
import { useEffect, useId, useRef, useState } from "preact/hooks"
import { niceCeiling } from "./format.js"

export interface Bar {
  /** An ISO day, `2026-11-03`. */
  readonly day: string
  readonly value: number
  /** What the readout says of the day besides its date: "2 jobs, 20 billable seconds, $0.002 charged". */
  readonly detail: string
}

const HEIGHT = 220
const MARGIN = { top: 12, right: 12, bottom: 48, left: 52 }

const shortDay = (day: string) => new Date(`${day}T00:00:00Z`).toLocaleDateString("en-GB", { day: "numeric", month: "short", timeZone: "UTC" })
export const longDay = (day: string) =>
  new Date(`${day}T00:00:00Z`).toLocaleDateString("en-GB", { weekday: "short", day: "numeric", month: "short", year: "numeric", timeZone: "UTC" })

export const BarChart = ({ title, yLabel, bars, summary }: {
  readonly title: string
  /** The y axis's title, e.g. "Jobs". */
  readonly yLabel: string
  readonly bars: ReadonlyArray<Bar>
  /** The readout when no day is chosen. */
  readonly summary: string
}) => {
  const box = useRef<HTMLDivElement>(null)
  const [width, setWidth] = useState(640)
  const [chosen, setChosen] = useState<number | null>(null)
  const readout = useId()
  useEffect(() => {
    const element = box.current
    if (element === null) return
    const observer = new ResizeObserver(([entry]) => entry && setWidth(Math.max(240, Math.floor(entry.contentRect.width))))
    observer.observe(element)
    return () => observer.disconnect()
  }, [])

  const count = bars.length
  const top = niceCeiling(Math.max(0, ...bars.map((b) => b.value)))
  const plotWidth = width - MARGIN.left - MARGIN.right
  const plotHeight = HEIGHT - MARGIN.top - MARGIN.bottom
  const step = plotWidth / Math.max(1, count)
  const y = (value: number) => MARGIN.top + plotHeight - (value / top) * plotHeight
  const ticks = top >= 2 && top % 2 === 0 ? [0, top / 2, top] : [0, top]
  const labelled = [...new Set([0, Math.floor((count - 1) / 2), count - 1])].filter((i) => i >= 0)
  const pick = (index: number) => setChosen(Math.min(count - 1, Math.max(0, index)))
  const current = chosen === null ? undefined : bars[chosen]

  return (
    <figure class="chart">
      <div
        ref={box}
        class="chart-area"
        tabIndex={0}
        role="group"
        aria-label={`${title}: ${bars.reduce((sum, b) => sum + b.value, 0)} in total over ${count} days. Use the arrow keys to read each day.`}
        aria-describedby={readout}
        onFocus={() => chosen === null && pick(count - 1)}
        onBlur={() => setChosen(null)}
        onKeyDown={(event) => {
          const moves: Record<string, number> = { ArrowLeft: -1, ArrowDown: -1, ArrowRight: 1, ArrowUp: 1 }
          if (event.key in moves) pick((chosen ?? count - 1) + moves[event.key]!)
          else if (event.key === "Home") pick(0)
          else if (event.key === "End") pick(count - 1)
          else return
          event.preventDefault()
        }}
        onMouseMove={(event) => {
          const left = event.currentTarget.getBoundingClientRect().left
          const index = Math.floor((event.clientX - left - MARGIN.left) / step)
          if (index >= 0 && index < count) pick(index)
        }}
        onMouseLeave={() => document.activeElement !== box.current && setChosen(null)}
      >
        <svg width={width} height={HEIGHT} aria-hidden="true" focusable="false">
          {ticks.map((tick) => (
            <g key={tick}>
              <line x1={MARGIN.left} x2={width - MARGIN.right} y1={y(tick)} y2={y(tick)} class="grid" />
              <text x={MARGIN.left - 6} y={y(tick) + 4} text-anchor="end" class="tick">{tick}</text>
            </g>
          ))}
          {bars.map((bar, i) => {
            const h = (bar.value / top) * plotHeight
            return (
              <rect key={bar.day} x={MARGIN.left + i * step + step * 0.15} y={MARGIN.top + plotHeight - h}
                width={Math.max(1, step * 0.7)} height={h} class={i === chosen ? "bar chosen" : "bar"} />
            )
          })}
          {current !== undefined && chosen !== null && (
            <rect x={MARGIN.left + chosen * step} y={MARGIN.top} width={step} height={plotHeight} class="column" />
          )}
          <line x1={MARGIN.left} x2={width - MARGIN.right} y1={y(0)} y2={y(0)} class="axis" />
          <line x1={MARGIN.left} x2={MARGIN.left} y1={MARGIN.top} y2={y(0)} class="axis" />
          {labelled.map((i) => (
            <text key={i} x={MARGIN.left + (i + 0.5) * step} y={y(0) + 18} class="tick"
              text-anchor={count > 2 && i === 0 ? "start" : count > 2 && i === count - 1 ? "end" : "middle"}>
              {shortDay(bars[i]!.day)}
            </text>
          ))}
          <text x={MARGIN.left + plotWidth / 2} y={HEIGHT - 6} text-anchor="middle" class="axis-title">Day (UTC)</text>
          <text x={14} y={MARGIN.top + plotHeight / 2} text-anchor="middle" class="axis-title"
            transform={`rotate(-90 14 ${MARGIN.top + plotHeight / 2})`}>{yLabel}</text>
        </svg>
      </div>
      <figcaption>
        <span class="chart-title">{title}</span>
        <span id={readout} class="chart-readout" aria-live="polite">
          {current === undefined ? summary : `${longDay(current.day)}: ${current.detail}`}
        </span>
      </figcaption>
    </figure>
  )
}
