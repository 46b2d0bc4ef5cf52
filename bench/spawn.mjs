// `node bench/spawn.mjs [--rss-mb 350] [--starts 40]`: what one ffmpeg start costs the process
// that starts it (issue 16), directly (`child_process.spawn` forks this process: libuv waits for
// the child's exec) and through a small helper process started once, which spawns the child and
// hands its stdin/stdout/stderr back over the IPC channel (SCM_RIGHTS: `process.send(msg, socket)`).
// Each start runs the pipeline's command line shape (`/bin/sh -c 'ulimit …; exec ffmpeg …'`),
// writes 1 s of silence to its stdin and reads its MP3 to the end, one after the other. Prints,
// per way: the event loop blocked per start (ms: the start call's synchronous time), this
// process's main-thread CPU per start (ms), the helper's CPU per start and the wall time per start.
import { fork, spawn } from "node:child_process"
import { readFileSync } from "node:fs"

const arg = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`)
  return at < 0 ? fallback : Number(process.argv[at + 1])
}

if (process.argv[2] === "--helper") {
  // the helper: spawns on request, sends the pipes back, reports the exit
  process.on("message", ({ id, file, args }) => {
    const child = spawn(file, args, { stdio: "pipe" })
    child.once("spawn", () => {
      process.send({ id, pipe: "stdin" }, child.stdin)
      process.send({ id, pipe: "stdout" }, child.stdout)
      process.send({ id, pipe: "stderr" }, child.stderr)
    })
    // "exit", not "close": the pipes were handed over, their wrappers here never close
    child.once("exit", (code, signal) => process.send({ id, exit: { code, signal } }))
  })
} else {
  const rssMb = arg("rss-mb", 350)
  const starts = arg("starts", 40)
  // a resident heap like the server's during short jobs: touched pages, as the fork must copy their tables
  const ballast = []
  for (let mb = 0; mb < rssMb - 60; mb += 8) ballast.push(Buffer.alloc(8 * 1024 * 1024, 1))

  const cpuMs = (statPath) => {
    const text = readFileSync(statPath, "utf8")
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ").map(Number)
    return (fields[11] + fields[12]) * 10
  }
  const mainCpuMs = () => cpuMs(`/proc/${process.pid}/task/${process.pid}/stat`)
  const helperCpuMs = () => cpuMs(`/proc/${helper.pid}/stat`)
  const command = ["/bin/sh", ["-c", "ulimit -t 60 && ulimit -f 0 && exec \"$0\" \"$@\"", "ffmpeg", "-hide_banner", "-loglevel", "error",
    "-f", "f32le", "-ar", "48000", "-ac", "1", "-i", "pipe:0", "-c:a", "libmp3lame", "-b:a", "128k", "-f", "mp3", "pipe:1"]]
  const silence = Buffer.alloc(48_000 * 4)

  /** Feeds and drains one child; resolves once its output ended and it exited. */
  const run = (stdin, stdout, exited) =>
    new Promise((resolve) => {
      let bytes = 0
      stdout.on("data", (chunk) => { bytes += chunk.length })
      stdin.on("error", () => {})
      stdin.end(silence)
      Promise.all([new Promise((r) => stdout.once("end", r)), exited]).then(() => resolve(bytes))
    })

  const direct = async () => {
    const t = performance.now()
    const child = spawn(command[0], command[1], { stdio: "pipe" })
    const blocked = performance.now() - t
    const exited = new Promise((r) => child.once("close", r))
    child.stderr.resume()
    return { blocked, bytes: await run(child.stdin, child.stdout, exited) }
  }

  const helper = fork(new URL(import.meta.url).pathname, ["--helper"], { stdio: ["ignore", "inherit", "inherit", "ipc"] })
  const waiting = new Map()
  helper.on("message", (message, handle) => {
    const entry = waiting.get(message.id)
    if (message.pipe !== undefined) entry[message.pipe] = handle
    else entry.exit(message.exit)
    if (entry.stdin && entry.stdout && entry.stderr && !entry.started) {
      entry.started = true
      entry.ready()
    }
  })
  let ids = 0
  const viaHelper = async () => {
    const id = ids++
    const entry = {}
    const ready = new Promise((r) => { entry.ready = r })
    const exited = new Promise((r) => { entry.exit = r })
    waiting.set(id, entry)
    const t = performance.now()
    helper.send({ id, file: command[0], args: command[1] })
    const blocked = performance.now() - t
    await ready
    entry.stderr.resume()
    const bytes = await run(entry.stdin, entry.stdout, exited)
    waiting.delete(id)
    return { blocked, bytes }
  }

  const measure = async (name, start) => {
    await start() // warm-up
    const cpu0 = mainCpuMs()
    const helper0 = helperCpuMs()
    const t0 = performance.now()
    let blocked = 0
    let maxBlocked = 0
    for (let i = 0; i < starts; i++) {
      const r = await start()
      if (r.bytes < 10_000) throw new Error(`${name}: no MP3 came back`)
      blocked += r.blocked
      maxBlocked = Math.max(maxBlocked, r.blocked)
    }
    return {
      way: name,
      blockedMsPerStart: Number((blocked / starts).toFixed(2)),
      maxBlockedMs: Number(maxBlocked.toFixed(1)),
      mainThreadCpuMsPerStart: Number(((mainCpuMs() - cpu0) / starts).toFixed(1)),
      helperCpuMsPerStart: Number(((helperCpuMs() - helper0) / starts).toFixed(1)),
      wallMsPerStart: Number(((performance.now() - t0) / starts).toFixed(1))
    }
  }

  const rss = Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))[1]) / 1024)
  const results = []
  for (let round = 0; round < 2; round++) {
    results.push(await measure("direct", direct))
    results.push(await measure("helper", viaHelper))
  }
  helper.kill()
  console.log(JSON.stringify({ rssMb: rss, starts, results, ballast: ballast.length }))
}
