/**
 * Denoise in the browser (decisions.md, Web dashboard: doing the work): pick or drop a file,
 * choose the model and options, watch the upload go straight to the signed URL (multipart over
 * 100 MiB, as the API plans it), then the check of the audio, then the job's page. Live mode,
 * billed from the account's credit by the keyed API's rules.
 */
import { useRef, useState } from "preact/hooks"
import { call, describeError } from "../api.js"
import { formatBytes } from "../format.js"
import { isAcceptedAudioType } from "../../../../core/rules/content-types.js"
import type { OutputFormat } from "../../../../core/domain/denoise-options.js"
import { Link, navigate } from "../router.js"
import { useLoad, Field, Page, Show } from "../ui.js"
import { sendFile } from "../upload.js"
import { jobHref } from "./jobs.js"

/** decisions.md, Files: 5 GB in binary units. */
const MAX_BYTES = 5 * 1024 ** 3

/** When the browser does not know a file's type: its extension's (what `file` would say). */
const TYPE_BY_EXTENSION: Record<string, string> = {
  wav: "audio/wav", mp3: "audio/mpeg", flac: "audio/flac", ogg: "audio/ogg", oga: "audio/ogg", opus: "audio/ogg",
  m4a: "audio/mp4", aac: "audio/aac", aif: "audio/aiff", aiff: "audio/aiff", weba: "audio/webm",
  mp4: "video/mp4", mov: "video/quicktime", webm: "video/webm", mkv: "video/x-matroska"
}

export const contentTypeOf = (file: { readonly name: string; readonly type: string }) =>
  file.type !== "" ? file.type : TYPE_BY_EXTENSION[file.name.split(".").pop()?.toLowerCase() ?? ""] ?? "application/octet-stream"

const ACCEPT = "audio/*,video/mp4,video/quicktime,video/webm,video/x-matroska,application/ogg"

type Phase =
  | { readonly step: "idle" }
  | { readonly step: "uploading"; readonly sent: number; readonly total: number; readonly parts: number }
  | { readonly step: "checking" }
  | { readonly step: "starting" }
  | { readonly step: "failed"; readonly message: string }

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** What the file's choice says: refused early, in words, what the API would refuse. */
const checkFile = (file: File | null): string | null => {
  if (file === null) return "Choose a file first."
  if (file.size === 0) return `${file.name} is empty.`
  if (file.size > MAX_BYTES) return `${file.name} is ${formatBytes(file.size)}; a file may be at most 5.0 GB.`
  if (!isAcceptedAudioType(contentTypeOf(file))) return `${file.name} is not audio (or a video with sound) of a type Hush reads.`
  return null
}

const numberOrNull = (text: string) => (text.trim() === "" ? null : Number(text))

export const NewJobPage = () => {
  const [models] = useLoad(() => call((api) => api.models.listModels()), [])
  const [credits] = useLoad(() => call((api) => api.dashboard.getDashboardCredits()), [])
  const [file, setFile] = useState<File | null>(null)
  const [dragging, setDragging] = useState(false)
  const [model, setModel] = useState("")
  const [strength, setStrength] = useState("")
  const [format, setFormat] = useState<OutputFormat>("mp3")
  const [loudness, setLoudness] = useState("")
  const [phase, setPhase] = useState<Phase>({ step: "idle" })
  const stop = useRef<AbortController | null>(null)
  const busy = phase.step === "uploading" || phase.step === "checking" || phase.step === "starting"

  const choose = (chosen: File | null) => {
    setFile(chosen)
    setPhase({ step: "idle" })
  }

  const start = async () => {
    const refused = checkFile(file)
    const strengthValue = numberOrNull(strength)
    const loudnessValue = numberOrNull(loudness)
    if (refused !== null) return setPhase({ step: "failed", message: refused })
    if (strengthValue !== null && !(strengthValue >= 0 && strengthValue <= 1)) return setPhase({ step: "failed", message: "Strength is a number from 0 to 1, or empty for automatic." })
    if (loudnessValue !== null && !(loudnessValue >= -31 && loudnessValue <= -9)) return setPhase({ step: "failed", message: "Loudness is a target from −31 to −9 LUFS, or empty to leave the level as it is." })
    const chosen = file!
    const controller = new AbortController()
    stop.current = controller
    // one key per request of this attempt: a retried request never makes a second file or job
    const attempt = crypto.randomUUID()
    try {
      const created = await call((api) => api.work.createDashboardFile({
        payload: { filename: chosen.name, size_bytes: chosen.size, content_type: contentTypeOf(chosen) },
        headers: { "idempotency-key": `${attempt}-file` }
      }))
      const target = created.upload!
      const parts = target.method === "PUT" ? 1 : target.parts.length
      setPhase({ step: "uploading", sent: 0, total: chosen.size, parts })
      const sent = await sendFile(chosen, target, (bytes) => setPhase({ step: "uploading", sent: bytes, total: chosen.size, parts }), controller.signal)
      setPhase({ step: "checking" })
      await call((api) => api.work.completeDashboardFile({
        path: { file_id: created.id }, payload: sent === null ? {} : { parts: sent }, headers: { "idempotency-key": `${attempt}-complete` }
      }))
      for (let wait = 250; ; wait = Math.min(2_000, wait * 1.5)) {
        const checked = await call((api) => api.work.getDashboardFile({ path: { file_id: created.id } }))
        if (checked.status === "rejected") throw new Error(`${chosen.name} could not be read as audio: ${checked.error?.message ?? "rejected"}`)
        if (checked.status === "ready") break
        await sleep(wait)
      }
      setPhase({ step: "starting" })
      const job = await call((api) => api.work.createDashboardDenoiseJob({
        payload: {
          file: created.id,
          model: model === "" ? null : model,
          strength: strengthValue,
          output: { format, loudness: loudnessValue }
        },
        headers: { "idempotency-key": `${attempt}-job` }
      }))
      navigate(jobHref(job))
    } catch (error) {
      setPhase({ step: "failed", message: error instanceof Error && !("_tag" in error) ? error.message : describeError(error) })
    } finally {
      stop.current = null
    }
  }

  return (
    <Page title="Denoise a file">
      <p>Your file goes straight to storage, is checked, then denoised in live mode and billed per second from your credit.</p>
      <Show loaded={credits} what="your credit">
        {(c) => (
          <p class={c.available_micros === 0 ? "notice" : "muted"}>
            Available credit: {c.display}.{c.available_micros === 0 && <> <Link href="/dashboard/credits">Buy credit</Link> to run live jobs.</>}
          </p>
        )}
      </Show>
      <form class="card wide" onSubmit={(event) => {
        event.preventDefault()
        if (!busy) void start()
      }}>
        <div
          class={dragging ? "drop dragging" : "drop"}
          onDragOver={(event) => {
            event.preventDefault()
            setDragging(true)
          }}
          onDragLeave={() => setDragging(false)}
          onDrop={(event) => {
            event.preventDefault()
            setDragging(false)
            const dropped = event.dataTransfer?.files[0]
            if (dropped !== undefined) choose(dropped)
          }}
        >
          <Field label="Audio or video file" hint="Drop it here or choose it: WAV, MP3, FLAC, Ogg/Opus, M4A, MP4, MOV, WebM or MKV, up to 5.0 GB.">
            <input type="file" name="file" accept={ACCEPT} disabled={busy} onChange={(e) => choose(e.currentTarget.files?.[0] ?? null)} />
          </Field>
          {file !== null && <p data-testid="chosen-file"><strong>{file.name}</strong>, {formatBytes(file.size)}</p>}
        </div>
        <Show loaded={models} what="the models">
          {(list) => (
            <Field label="Model" hint="Default: the service's standard denoiser. The price is per second of audio, held when the job starts and charged only if it succeeds.">
              <select name="model" value={model} disabled={busy} onChange={(e) => setModel(e.currentTarget.value)}>
                <option value="">Default</option>
                {list.data.filter((m) => m.task === "denoise" && m.status === "live").map((m) => (
                  <option key={m.id} value={m.id}>{m.name} ({m.id}): {m.pricing.display}</option>
                ))}
              </select>
            </Field>
          )}
        </Show>
        <Field label="Strength (0 to 1)" hint="Default (empty): chosen for your file so clean speech is never made worse. 0.9 leaves a tenth of the noise (−20 dB); 1 removes all it can.">
          <input type="number" name="strength" min={0} max={1} step={0.05} placeholder="automatic" value={strength} disabled={busy} onInput={(e) => setStrength(e.currentTarget.value)} />
        </Field>
        <Field label="Output format" hint="Default: MP3 at 192 kbps. WAV is 16-bit PCM, FLAC is lossless, Opus is 96 kbps in Ogg.">
          <select name="format" value={format} disabled={busy} onChange={(e) => setFormat(e.currentTarget.value as OutputFormat)}>
            <option value="mp3">MP3</option><option value="wav">WAV</option><option value="flac">FLAC</option><option value="opus">Opus</option>
          </select>
        </Field>
        <Field label="Loudness target (LUFS)" hint="Default (empty): the level is left as it is. A target from −31 to −9, such as −16 for podcasts, evens it; the true peak stays at or below −1 dBTP.">
          <input type="number" name="loudness" min={-31} max={-9} step={0.5} placeholder="unchanged" value={loudness} disabled={busy} onInput={(e) => setLoudness(e.currentTarget.value)} />
        </Field>
        <Progress phase={phase} />
        <div class="row">
          <button type="submit" disabled={busy}>{busy ? "Working…" : "Upload and denoise"}</button>
          {phase.step === "uploading" && <button type="button" class="secondary" onClick={() => stop.current?.abort()}>Stop the upload</button>}
        </div>
      </form>
    </Page>
  )
}

const Progress = ({ phase }: { readonly phase: Phase }) => {
  switch (phase.step) {
    case "idle":
      return null
    case "failed":
      return <p class="failure" role="alert">{phase.message}</p>
    case "uploading": {
      const percent = phase.total === 0 ? 0 : Math.floor((phase.sent / phase.total) * 100)
      return (
        <div class="upload-progress">
          <label for="upload-progress">
            Uploading {formatBytes(phase.sent)} of {formatBytes(phase.total)}{phase.parts > 1 && ` in ${phase.parts} parts`}: {percent} %
          </label>
          <progress id="upload-progress" max={phase.total} value={phase.sent}>{percent} %</progress>
        </div>
      )
    }
    case "checking":
      return <p class="loading" role="status">Uploaded. Checking the audio…</p>
    case "starting":
      return <p class="loading" role="status">Starting the job…</p>
  }
}
