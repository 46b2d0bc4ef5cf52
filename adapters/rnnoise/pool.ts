/**
 * A fixed set of worker threads that denoise chunks (chunk-worker.mjs). Threads start on
 * first use and are terminated when the pool's scope closes. A task that is interrupted
 * while queued is dropped; one already running finishes and its result is discarded.
 */
import { Worker } from "node:worker_threads"
import { Effect } from "effect"
import type { ChunkTask } from "./pcm.js"

export interface ChunkPool {
  readonly size: number
  /** Denoises the chunk in its own buffer, which is transferred: the task's `pcm` is unusable afterwards. */
  readonly run: (task: ChunkTask) => Effect.Effect<Float32Array>
}

/** The messages of chunk-worker.mjs. */
interface ChunkRequest extends ChunkTask {
  readonly id: number
}

type ChunkReply =
  | { readonly id: number; readonly out: Float32Array }
  | { readonly id: number; readonly error: string }

interface Pending {
  readonly request: ChunkRequest
  readonly done: (result: Float32Array | Error) => void
}

const WORKER_URL = new URL("./chunk-worker.mjs", import.meta.url)

class Threads {
  private readonly idle: Array<Worker> = []
  private readonly running = new Map<Worker, Pending>()
  private readonly queue: Array<Pending> = []
  private count = 0
  private nextId = 0
  private closed = false

  constructor(readonly size: number) {}

  submit(task: ChunkTask, done: Pending["done"]): () => void {
    const pending: Pending = { request: { ...task, id: this.nextId++ }, done }
    this.queue.push(pending)
    this.dispatch()
    return () => {
      const at = this.queue.indexOf(pending)
      if (at >= 0) this.queue.splice(at, 1)
    }
  }

  async close(): Promise<void> {
    this.closed = true
    const workers = [...this.idle, ...this.running.keys()]
    this.idle.length = 0
    for (const pending of [...this.queue, ...this.running.values()]) pending.done(new Error("the chunk pool closed"))
    this.queue.length = 0
    this.running.clear()
    await Promise.all(workers.map((worker) => worker.terminate()))
  }

  private dispatch() {
    while (!this.closed && this.queue.length > 0 && (this.idle.length > 0 || this.count < this.size)) {
      const worker = this.idle.pop() ?? this.spawn()
      const pending = this.queue.shift()!
      this.running.set(worker, pending)
      // The samples' buffer moves to the thread (no copy) and comes back holding the output.
      worker.postMessage(pending.request, [pending.request.pcm.buffer as ArrayBuffer])
    }
  }

  private spawn(): Worker {
    const worker = new Worker(WORKER_URL)
    this.count++
    worker.on("message", (reply: ChunkReply) => {
      const pending = this.running.get(worker)
      this.running.delete(worker)
      this.idle.push(worker)
      pending?.done("out" in reply ? reply.out : new Error(`denoising a chunk failed: ${reply.error}`))
      this.dispatch()
    })
    // A crashed thread fails its task and is replaced on demand.
    let gone = false
    const lost = (error: Error) => {
      if (gone) return // 'error' is followed by 'exit'
      gone = true
      const pending = this.running.get(worker)
      this.running.delete(worker)
      const at = this.idle.indexOf(worker)
      if (at >= 0) this.idle.splice(at, 1)
      this.count--
      pending?.done(error)
      this.dispatch()
    }
    worker.once("error", lost)
    worker.once("exit", (code) => {
      if (!this.closed) lost(new Error(`a denoising thread exited with code ${code}`))
    })
    return worker
  }
}

export const makeChunkPool = (size: number) =>
  Effect.map(
    Effect.acquireRelease(
      Effect.sync(() => new Threads(size)),
      (threads) => Effect.promise(() => threads.close())
    ),
    (threads): ChunkPool => ({
      size,
      run: (task) =>
        Effect.async<Float32Array>((resume) => {
          const cancel = threads.submit(task, (result) =>
            resume(result instanceof Error ? Effect.die(result) : Effect.succeed(result)))
          return Effect.sync(cancel)
        })
    })
  )
