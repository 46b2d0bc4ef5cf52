/** `hush denoise`'s progress output (apps/cli/user/progress.ts): a redrawn bar on a terminal, plain lines elsewhere. */
import { describe, expect, it } from "vitest"
import { makeProgress, mib } from "../../../apps/cli/user/progress.js"

const sink = () => {
  let text = ""
  return { stream: { write: (chunk: string) => (text += chunk, true), isTTY: false } as unknown as NodeJS.WriteStream, text: () => text }
}

describe("progress output", () => {
  it("elsewhere than a terminal: one plain line per tenth of the way and per note, no escape codes", () => {
    const out = sink()
    const progress = makeProgress(out.stream, { tty: false })
    for (let done = 0; done <= 100; done++) progress.update("Uploading ", done, 100)
    progress.note("Uploaded")
    expect(out.text().split("\n").filter((l) => l !== "")).toEqual([
      ...[0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100].map((p) => `Uploading  ${p}%`),
      "Uploaded"
    ])
  })

  it("on a terminal: the line is redrawn in place with a bar, and ended before a note", () => {
    const out = sink()
    const progress = makeProgress(out.stream, { tty: true })
    progress.update("Denoising ", 0.5, 1, "processing")
    progress.update("Denoising ", 1, 1, "succeeded")
    progress.note("Saved")
    expect(out.text()).toBe(
      "\r\x1b[2KDenoising  [############------------]  50%  processing" +
      "\r\x1b[2KDenoising  [########################] 100%  succeeded\nSaved\n"
    )
  })

  it("sizes in KiB under a MiB, else MiB", () => {
    expect([mib(2048), mib(150 * 1024 * 1024 + 5)]).toEqual(["2.0 KiB", "150.0 MiB"])
  })
})
