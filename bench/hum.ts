/**
 * What the hum stage (adapters/rnnoise/hum.mjs) costs beside RNNoise, on one core: 60 s of
 * noise with and without 50 Hz hum, frame by frame as the engine runs them, each timed
 * alone, the two taking turns (best of 5 runs each: a shared machine's load comes and goes).
 * Prints × real time and the stage's time as a share of the model's.
 *
 *   npx tsx bench/hum.ts
 */
import { loadavg } from "node:os"
import { FRAME_SIZE, rnnoiseModule, SAMPLE_RATE } from "../adapters/rnnoise/engine.mjs"
import { HumRemover } from "../adapters/rnnoise/hum.mjs"

const SECONDS = 60
const N = SECONDS * SAMPLE_RATE

/** White noise at −36 dBFS, optionally with hum at 50 Hz and harmonics 2, 3, 5, 7 (16-bit range). */
const signal = (withHum: boolean) => {
  let s = 1
  return Float32Array.from({ length: N }, (_, i) => {
    s ^= s << 13; s ^= s >>> 17; s ^= s << 5
    const t = i / SAMPLE_RATE
    const hum = withHum
      ? 3000 * (Math.sin(2 * Math.PI * 50 * t) + 0.5 * Math.sin(2 * Math.PI * 100 * t + 1) + 0.4 * Math.sin(2 * Math.PI * 150 * t + 2) +
        0.2 * Math.sin(2 * Math.PI * 250 * t) + 0.1 * Math.sin(2 * Math.PI * 350 * t))
      : 0
    return hum + 1000 * ((s >>> 0) / 2 ** 32 - 0.5)
  })
}

const seconds = (run: () => void) => {
  const t0 = performance.now()
  run()
  return (performance.now() - t0) / 1000
}

const humTime = (x: Float32Array) => seconds(() => {
  const remover = new HumRemover(FRAME_SIZE)
  const frame = new Float32Array(FRAME_SIZE)
  for (let at = 0; at + FRAME_SIZE <= N; at += FRAME_SIZE) {
    frame.set(x.subarray(at, at + FRAME_SIZE))
    remover.process(frame)
  }
})

const modelTime = (x: Float32Array) => seconds(() => {
  const module = rnnoiseModule()
  const state = module._rnnoise_create(0)
  const buffer = module._malloc(FRAME_SIZE * 4)
  for (let at = 0; at + FRAME_SIZE <= N; at += FRAME_SIZE) {
    module.HEAPF32.set(x.subarray(at, at + FRAME_SIZE), buffer >> 2)
    module._rnnoise_process_frame(state, buffer, buffer)
  }
  module._rnnoise_destroy(state)
  module._free(buffer)
})

console.log("| input (60 s) | hum stage ×RT | RNNoise ×RT | hum stage ÷ RNNoise |")
console.log("|---|---|---|---|")
for (const withHum of [false, true]) {
  const x = signal(withHum)
  let hum = Infinity
  let model = Infinity
  for (let i = 0; i < 5; i++) (hum = Math.min(hum, humTime(x)), model = Math.min(model, modelTime(x)))
  console.log(`| ${withHum ? "noise + 50 Hz hum" : "noise, no hum"} | ${(SECONDS / hum).toFixed(0)} | ${(SECONDS / model).toFixed(1)} | ${((100 * hum) / model).toFixed(1)} % |`)
}
console.log(`load average ${loadavg().map((l) => l.toFixed(1)).join(" ")}`)
