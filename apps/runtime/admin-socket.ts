/**
 * The operator channel of a running server: a Unix socket in DATA_DIR (owner-only), through
 * which `npm run hush -- admin …` acts on the server's own data while it runs, whatever the
 * store (the in-memory one included).
 */
import { Effect, Exit, Layer, Runtime, Schema } from "effect"
import { chmodSync, existsSync, rmSync } from "node:fs"
import { createServer, request } from "node:http"
import { join } from "node:path"
import { AdminCommand, type AdminNeeds, runAdminCommand } from "../cli/commands.js"

export const adminSocketPath = (dataDir: string) => join(dataDir, "admin.sock")

const decodeCommand = Schema.decodeUnknownEither(Schema.parseJson(AdminCommand))

export const AdminSocketLive = (dataDir: string) =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const runtime = yield* Effect.runtime<AdminNeeds>()
    const path = adminSocketPath(dataDir)
    const server = createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (chunk: Buffer) => chunks.push(chunk))
      req.on("end", () => {
        const command = decodeCommand(Buffer.concat(chunks).toString("utf8"))
        if (command._tag === "Left") {
          res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: "malformed admin command" }))
          return
        }
        Runtime.runPromiseExit(runtime)(runAdminCommand(command.right)).then((exit) => {
          if (Exit.isSuccess(exit)) {
            res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(exit.value))
          } else {
            const message = exit.cause._tag === "Fail" ? exit.cause.error.detail : "the command failed"
            res.writeHead(422, { "content-type": "application/json" }).end(JSON.stringify({ error: message }))
          }
        })
      })
    })
    // a socket left by a crashed server would block the new one
    if (existsSync(path)) rmSync(path)
    yield* Effect.acquireRelease(
      Effect.async<void, Error>((resume) => {
        server.once("error", (e) => resume(Effect.fail(e)))
        server.listen(path, () => {
          chmodSync(path, 0o600)
          resume(Effect.void)
        })
      }),
      () => Effect.async<void>((resume) => {
        server.close(() => resume(Effect.void))
      })
    ).pipe(Effect.orDie)
  }))

/** Sends a command to a running server; `null` when none listens on DATA_DIR's socket. */
export const sendAdminCommand = (dataDir: string, command: AdminCommand): Promise<{ status: number; body: unknown } | null> =>
  new Promise((resolve, reject) => {
    const path = adminSocketPath(dataDir)
    if (!existsSync(path)) return resolve(null)
    const req = request({ socketPath: path, method: "POST", path: "/", headers: { "content-type": "application/json" } }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (chunk: Buffer) => chunks.push(chunk))
      res.on("end", () => resolve({ status: res.statusCode ?? 500, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) }))
    })
    req.on("error", (error: NodeJS.ErrnoException) =>
      error.code === "ECONNREFUSED" || error.code === "ENOENT" ? resolve(null) : reject(error))
    req.end(JSON.stringify(Schema.encodeSync(AdminCommand)(command)))
  })
