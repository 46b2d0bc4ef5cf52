/**
 * `npm run chaos [-- --minutes N] [--seed S] [--faults TEXT]`: the chaos harness (./run.ts) on
 * the production build, loopback only; `--faults` keeps only the faults whose kind contains
 * TEXT (e.g. `COMMIT`). Prints the run's log and its table; exits 1 when a violation was found.
 * `CHAOS_KEEP=1` keeps the run's directory (the processes' logs) for a look afterwards.
 */
import { runChaos } from "./run.js"

const args = process.argv.slice(2)
const valueOf = (name: string) => {
  const at = args.indexOf(name)
  if (at < 0) return undefined
  const value = Number(args[at + 1])
  if (!Number.isFinite(value) || value <= 0) {
    console.error(`${name} needs a positive number`)
    process.exit(2)
  }
  return value
}

const only = args.includes("--faults") ? args[args.indexOf("--faults") + 1] : undefined
const report = await runChaos({ minutes: valueOf("--minutes"), seed: valueOf("--seed"), only })
console.log(`\n${report.table}\n`)
process.exit(report.violations === 0 ? 0 : 1)
