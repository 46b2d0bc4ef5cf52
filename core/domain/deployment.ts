import { Context } from "effect"
import type { OutputFormat } from "./denoise-options.js"

/** One stored copy of the shipped sample. */
export interface SampleObject {
  readonly storageKey: string
  readonly sizeBytes: number
  readonly bitrateKbps: number
  readonly format: OutputFormat
}

/** The shipped sample every test-mode job returns, in each output format, stored once in the blob store at start. */
export type TestModeSample = { readonly [format in OutputFormat]: SampleObject }

export class TestSample extends Context.Tag("hush/TestSample")<TestSample, TestModeSample>() {}

/** Secret keys of this deployment (cursor signing); configuration, never hard-coded in production. */
export class DeploymentSecrets extends Context.Tag("hush/DeploymentSecrets")<DeploymentSecrets, {
  readonly cursorKey: Uint8Array
}>() {}
