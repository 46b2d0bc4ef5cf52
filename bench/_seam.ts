import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Denoiser, denoiseChunk } from "../adapters/rnnoise/engine.js"
import { ChunkCutter } from "../adapters/rnnoise/pcm.js"
import { decodeToFloat, makeNoisySpeech, bestLag } from "../test/support/audio-fixtures.js"
const dir = mkdtempSync(join(tmpdir(), "seam-"))
await makeNoisySpeech(join(dir, "a.wav"), { seconds: 30 })
const x = await decodeToFloat(join(dir, "a.wav"))
const d = new Denoiser(1); const a = d.push(x); const b = d.end(); const ref = new Float32Array(x.length); ref.set(a); ref.set(b, a.length)
console.log("lag", bestLag(x, ref, 100, 2, 10))
for (const warm of [0, 0.25, 0.5, 1, 2]) {
  const body = 3 * 48000
  const cutter = new ChunkCutter(1, body, Math.round(warm * 100) * 480, 1440)
  const tasks = [...cutter.push(x), ...cutter.end()]
  const out = new Float32Array(x.length); let at = 0
  for (const t of tasks) { const o = denoiseChunk(t.pcm, 1, t.skip, t.take); out.set(o, at); at += o.length }
  let maxDiff = 0, maxSeamDiff = 0, maxJumpSeam = 0, maxJumpRef = 0, sq = 0
  for (let i = 0; i < x.length; i++) { const df = Math.abs(out[i] - ref[i]); maxDiff = Math.max(maxDiff, df); sq += df*df }
  for (let k = 1; k * body < x.length; k++) { const s = k * body; for (let i = s - 2400; i < s + 2400; i++) maxSeamDiff = Math.max(maxSeamDiff, Math.abs(out[i] - ref[i])); maxJumpSeam = Math.max(maxJumpSeam, Math.abs(out[s] - out[s - 1])) }
  for (let i = 1; i < x.length; i++) maxJumpRef = Math.max(maxJumpRef, Math.abs(ref[i] - ref[i - 1]))
  console.log({ warm, at, len: x.length, maxDiff: maxDiff.toFixed(5), rmsDiffDb: (10*Math.log10(sq/x.length)).toFixed(1), maxSeamDiff: maxSeamDiff.toFixed(5), maxJumpSeam: maxJumpSeam.toFixed(5), maxJumpRef: maxJumpRef.toFixed(5) })
}
