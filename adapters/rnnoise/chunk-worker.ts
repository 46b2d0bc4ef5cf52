/** Worker-thread side of the chunk pool (pool.ts): denoises one chunk per message. */
import { parentPort } from "node:worker_threads"
import { denoiseChunk } from "./engine.js"
import type { ChunkTask } from "./pcm.js"

export interface ChunkRequest extends ChunkTask {
  readonly id: number
}

export type ChunkReply =
  | { readonly id: number; readonly out: Float32Array }
  | { readonly id: number; readonly error: string }

const port = parentPort
if (port === null) throw new Error("chunk-worker.ts runs in a worker thread")

port.on("message", (request: ChunkRequest) => {
  let reply: ChunkReply
  try {
    reply = { id: request.id, out: denoiseChunk(request.pcm, request.channels, request.skip, request.take) }
  } catch (error) {
    reply = { id: request.id, error: error instanceof Error ? error.stack ?? error.message : String(error) }
  }
  port.postMessage(reply, "out" in reply ? [reply.out.buffer as ArrayBuffer] : [])
})
