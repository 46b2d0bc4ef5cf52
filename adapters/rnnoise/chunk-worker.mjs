// Worker-thread side of the chunk pool (pool.ts): denoises one chunk per message.
// Plain JavaScript, like engine.mjs, so that Node loads it without a TypeScript loader
// (under tsx, vitest or compiled alike).
// Request: { id, pcm: Float32Array, channels, skip, take, strength, model }. Reply: { id, out } or { id, error }.
import { parentPort } from "node:worker_threads"
import { denoiseChunk } from "./engine.mjs"

if (parentPort === null) throw new Error("chunk-worker.mjs runs in a worker thread")

parentPort.on("message", (request) => {
  try {
    // In place: the chunk's own buffer goes back, a view on its output part.
    const out = denoiseChunk(request.pcm, request.channels, request.skip, request.take, request.strength, request.model)
    parentPort.postMessage({ id: request.id, out }, [out.buffer])
  } catch (error) {
    parentPort.postMessage({ id: request.id, error: error instanceof Error ? error.stack ?? error.message : String(error) })
  }
})
